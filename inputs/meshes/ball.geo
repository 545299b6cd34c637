// A ball of radius 0.1 m centred at the origin, for inputs/ball_squeeze.json.
// Regenerate ball.msh with: gmsh -3 -format msh22 -o ball.msh ball.geo
SetFactory("OpenCASCADE");
Sphere(1) = {0, 0, 0, 0.1};
Mesh.CharacteristicLengthMax = 0.035;
Mesh.Optimize = 1;
Mesh.RandomSeed = 1;
