/// @file check_output.cpp
/// @brief Output checker: exact predicates (filtered, with an expansion-arithmetic fallback), exact
/// triangle–triangle intersection built from segment–triangle tests, a uniform-grid broad phase, and the
/// reading and merging of a written series with VTK's XML readers.

#include "src/tools/check_output.hpp"

#include "kernels/rigid_motion.hpp"
#include "src/core/error.hpp"
#include "src/io/mesh_reader.hpp"
#include "src/mesh/scene_mesh.hpp"
#include "src/mesh/surface.hpp"
#include "src/mesh/tet_mesh.hpp"

#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkCommand.h>
#include <vtkDataArray.h>
#include <vtkExecutive.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#include <vtkVariant.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace intact::tools {
namespace {

namespace fs = std::filesystem;

// ---- Exact arithmetic ---------------------------------------------------------------------------------
// Shewchuk, "Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric Predicates" (1997).
// An expansion is an exact sum of doubles: nonoverlapping, increasing magnitude, zeros removed (zero is the
// empty expansion), so its sign is the sign of its last component. Only the rare inputs that the
// floating-point filter cannot decide come here, so plain vectors are fast enough.

using Expansion = std::vector<double>;

/// Unit roundoff of double (Shewchuk's epsilon).
constexpr double k_epsilon = 0x1p-53;
/// Error bounds of the filters (Shewchuk's ccwerrboundA and o3derrboundA): when |det| exceeds
/// bound × permanent, the floating-point determinant has the exact sign.
constexpr double k_orient2d_bound = (3.0 + 16.0 * k_epsilon) * k_epsilon;
constexpr double k_orient3d_bound = (7.0 + 56.0 * k_epsilon) * k_epsilon;
/// Error bound of the filter in plane_side: three rounded products of rounded differences and two rounded
/// sums err by less than 4ε (1 + O(ε)) times the sum of the terms' magnitudes; 5ε leaves a margin.
constexpr double k_plane_side_bound = (5.0 + 64.0 * k_epsilon) * k_epsilon;

/// a + b = x + y exactly, |y| <= ulp(x) / 2.
void two_sum(double a, double b, double& x, double& y) {
    x = a + b;
    const double b_virtual = x - a;
    const double a_virtual = x - b_virtual;
    y = (a - a_virtual) + (b - b_virtual);
}

/// a - b = x + y exactly.
void two_diff(double a, double b, double& x, double& y) {
    x = a - b;
    const double b_virtual = a - x;
    const double a_virtual = x + b_virtual;
    y = (a - a_virtual) + (b_virtual - b);
}

/// a * b = x + y exactly: the fused multiply-add returns the rounding error of the product (correct with
/// or without hardware FMA, and immune to the compiler contracting expressions).
void two_product(double a, double b, double& x, double& y) {
    x = a * b;
    y = std::fma(a, b, -x);
}

/// a - b as an expansion.
Expansion difference(double a, double b) {
    double x = 0.0;
    double y = 0.0;
    two_diff(a, b, x, y);
    Expansion e;
    if (y != 0.0) {
        e.push_back(y);
    }
    if (x != 0.0) {
        e.push_back(x);
    }
    return e;
}

/// e + b (Shewchuk's GROW-EXPANSION with zero elimination).
Expansion grow(const Expansion& e, double b) {
    Expansion h;
    h.reserve(e.size() + 1);
    double q = b;
    for (const double component : e) {
        double sum = 0.0;
        double error = 0.0;
        two_sum(q, component, sum, error);
        if (error != 0.0) {
            h.push_back(error);
        }
        q = sum;
    }
    if (q != 0.0) {
        h.push_back(q);
    }
    return h;
}

/// e + f, one component of f at a time.
Expansion sum(Expansion e, const Expansion& f) {
    for (const double component : f) {
        e = grow(e, component);
    }
    return e;
}

/// e * b (Shewchuk's SCALE-EXPANSION with zero elimination).
Expansion scale(const Expansion& e, double b) {
    Expansion h;
    if (e.empty() || b == 0.0) {
        return h;
    }
    h.reserve(2 * e.size());
    double q = 0.0;
    double error = 0.0;
    two_product(e[0], b, q, error);
    if (error != 0.0) {
        h.push_back(error);
    }
    for (std::size_t i = 1; i < e.size(); ++i) {
        double product = 0.0;
        double product_error = 0.0;
        double partial = 0.0;
        two_product(e[i], b, product, product_error);
        two_sum(q, product_error, partial, error);
        if (error != 0.0) {
            h.push_back(error);
        }
        two_sum(product, partial, q, error);
        if (error != 0.0) {
            h.push_back(error);
        }
    }
    if (q != 0.0) {
        h.push_back(q);
    }
    return h;
}

/// e * f.
Expansion product(const Expansion& e, const Expansion& f) {
    Expansion result;
    for (const double component : f) {
        result = sum(std::move(result), scale(e, component));
    }
    return result;
}

Expansion negated(Expansion e) {
    for (double& component : e) {
        component = -component;
    }
    return e;
}

/// p q - r s.
Expansion cross_term(const Expansion& p, const Expansion& q, const Expansion& r, const Expansion& s) {
    return sum(product(p, q), negated(product(r, s)));
}

int sign_of(const Expansion& e) {
    return e.empty() ? 0 : (e.back() > 0.0 ? 1 : -1);
}

int sign_of(double value) {
    return (value > 0.0) - (value < 0.0);
}

// ---- Predicates -----------------------------------------------------------------------------------------

/// A point of a coordinate plane (a projection of a 3D point).
struct Point2 {
    double x;
    double y;
};

/// The projection that drops coordinate `axis`.
Point2 project(const Vec3& p, int axis) {
    return {p[(axis + 1) % 3], p[(axis + 2) % 3]};
}

/// Sign of (b-a)×(c-a): +1 when a, b, c turn counterclockwise, 0 when collinear. Exact.
int orient2d(const Point2& a, const Point2& b, const Point2& c) {
    const double left = (b.x - a.x) * (c.y - a.y);
    const double right = (b.y - a.y) * (c.x - a.x);
    const double det = left - right;
    const double bound = k_orient2d_bound * (std::abs(left) + std::abs(right));
    if (det > bound || -det > bound) {
        return sign_of(det);
    }
    return sign_of(
        cross_term(difference(b.x, a.x), difference(c.y, a.y), difference(b.y, a.y), difference(c.x, a.x)));
}

int orient3d_exact(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    std::array<Expansion, 3> ba;
    std::array<Expansion, 3> ca;
    std::array<Expansion, 3> da;
    for (int k = 0; k < 3; ++k) {
        ba[k] = difference(b[k], a[k]);
        ca[k] = difference(c[k], a[k]);
        da[k] = difference(d[k], a[k]);
    }
    Expansion det = product(ba[0], cross_term(ca[1], da[2], ca[2], da[1]));
    det = sum(std::move(det), product(ca[0], cross_term(da[1], ba[2], da[2], ba[1])));
    det = sum(std::move(det), product(da[0], cross_term(ba[1], ca[2], ba[2], ca[1])));
    return sign_of(det);
}

/// Sign of n·(x − q): +1 when x lies on the side of the plane through q that n points to, 0 on the plane.
/// Exact for the given doubles (n need not be unit length).
int plane_side(const Vec3& x, const Vec3& q, const Vec3& n) {
    double det = 0.0;
    double permanent = 0.0;
    for (int k = 0; k < 3; ++k) {
        const double term = n[k] * (x[k] - q[k]);
        det += term;
        permanent += std::abs(term);
    }
    const double bound = k_plane_side_bound * permanent;
    if (det > bound || -det > bound) {
        return sign_of(det);
    }
    Expansion exact;
    for (int k = 0; k < 3; ++k) {
        exact = sum(std::move(exact), scale(difference(x[k], q[k]), n[k]));
    }
    return sign_of(exact);
}

/// Whether c (collinear with a and b) lies on the closed segment ab.
bool within_segment(const Point2& a, const Point2& b, const Point2& c) {
    return std::min(a.x, b.x) <= c.x && c.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= c.y &&
           c.y <= std::max(a.y, b.y);
}

/// Closed segments ab and cd share a point. Also right for degenerate segments (a == b).
bool segments_meet_2d(const Point2& a, const Point2& b, const Point2& c, const Point2& d) {
    const int o1 = orient2d(a, b, c);
    const int o2 = orient2d(a, b, d);
    const int o3 = orient2d(c, d, a);
    const int o4 = orient2d(c, d, b);
    if (o1 * o2 < 0 && o3 * o4 < 0) {
        return true;
    }
    return (o1 == 0 && within_segment(a, b, c)) || (o2 == 0 && within_segment(a, b, d)) ||
           (o3 == 0 && within_segment(c, d, a)) || (o4 == 0 && within_segment(c, d, b));
}

/// Closed segment ab meets the closed triangle pqr (which may be degenerate).
bool segment_meets_triangle_2d(
    const Point2& a, const Point2& b, const Point2& p, const Point2& q, const Point2& r) {
    if (orient2d(p, q, r) != 0) {
        const auto inside = [&](const Point2& x) {
            const int s1 = orient2d(p, q, x);
            const int s2 = orient2d(q, r, x);
            const int s3 = orient2d(r, p, x);
            return !((s1 < 0 || s2 < 0 || s3 < 0) && (s1 > 0 || s2 > 0 || s3 > 0));
        };
        if (inside(a) || inside(b)) {
            return true;
        }
    }
    // Otherwise the segment crosses the boundary, or the triangle is degenerate (the union of its edges).
    return segments_meet_2d(a, b, p, q) || segments_meet_2d(a, b, q, r) || segments_meet_2d(a, b, r, p);
}

/// Whether the three coordinate projections of (a, b, c) are all collinear: the points are collinear.
bool collinear(const Vec3& a, const Vec3& b, const Vec3& c) {
    for (int axis = 0; axis < 3; ++axis) {
        if (orient2d(project(a, axis), project(b, axis), project(c, axis)) != 0) {
            return false;
        }
    }
    return true;
}

/// Closed segments ab and cd in space share a point.
bool segments_meet_3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    if (orient3d(a, b, c, d) != 0) {
        return false;
    }
    // Coplanar: some coordinate projection is one-to-one on a plane holding all four points, and every
    // projection of a common point is common, so the segments meet iff all three projections meet.
    for (int axis = 0; axis < 3; ++axis) {
        if (!segments_meet_2d(project(a, axis), project(b, axis), project(c, axis), project(d, axis))) {
            return false;
        }
    }
    return true;
}

/// Closed segment ab meets the closed triangle pqr. Exact; any degeneracy allowed.
bool segment_meets_triangle(const Vec3& a, const Vec3& b, const Vec3& p, const Vec3& q, const Vec3& r) {
    if (collinear(p, q, r)) {
        return segments_meet_3d(a, b, p, q) || segments_meet_3d(a, b, q, r) || segments_meet_3d(a, b, r, p);
    }
    const int side_a = orient3d(p, q, r, a);
    const int side_b = orient3d(p, q, r, b);
    if (side_a * side_b > 0) {
        return false;
    }
    if (side_a == 0 && side_b == 0) {
        // In the triangle's plane: as in segments_meet_3d, all three projections must meet.
        for (int axis = 0; axis < 3; ++axis) {
            if (!segment_meets_triangle_2d(project(a, axis), project(b, axis), project(p, axis),
                                           project(q, axis), project(r, axis))) {
                return false;
            }
        }
        return true;
    }
    // The segment reaches the plane at one point; it lies in the triangle iff the line ab passes every
    // edge on the same side (zero: through the edge).
    const int s1 = orient3d(a, b, p, q);
    const int s2 = orient3d(a, b, q, r);
    const int s3 = orient3d(a, b, r, p);
    return !((s1 < 0 || s2 < 0 || s3 < 0) && (s1 > 0 || s2 > 0 || s3 > 0));
}

// ---- Broad phase ----------------------------------------------------------------------------------------

struct Box {
    Vec3 lo;
    Vec3 hi;
};

bool boxes_overlap(const Box& a, const Box& b) {
    for (int k = 0; k < 3; ++k) {
        if (a.hi[k] < b.lo[k] || b.hi[k] < a.lo[k]) {
            return false;
        }
    }
    return true;
}

/// A box covering more grid cells than this is tested against every other box instead.
constexpr std::int64_t k_large_box_cells = 512;
/// Cells per axis at most, so cell coordinates and the grid stay bounded for scattered input.
constexpr double k_max_cells_per_axis = 1 << 20;

using Cell = std::array<std::int64_t, 3>;

/// Calls visit(i, j), i < j, once for every pair of boxes that overlap (closed boxes), in a deterministic
/// order. Uniform grid with the mean box size as cell size; a pair is visited in the first cell (in every
/// coordinate) that both boxes cover. Boxes must be finite.
template <class Visit> void for_each_overlapping_pair(const std::vector<Box>& boxes, Visit&& visit) {
    const std::size_t n = boxes.size();
    if (n < 2) {
        return;
    }
    Vec3 lo = boxes[0].lo;
    Vec3 hi = boxes[0].hi;
    double size_sum = 0.0;
    for (const Box& box : boxes) {
        double size = 0.0;
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], box.lo[k]);
            hi[k] = std::max(hi[k], box.hi[k]);
            size = std::max(size, box.hi[k] - box.lo[k]);
        }
        size_sum += size;
    }
    const double span = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
    double h = std::max(size_sum / static_cast<double>(n), span / k_max_cells_per_axis);
    if (!(h > 0.0) || !std::isfinite(h)) {
        h = 1.0; // every box is the same point
    }
    // Monotone in x, so overlapping boxes share a cell.
    const auto cell_of = [&](const Vec3& x) {
        Cell cell;
        for (int k = 0; k < 3; ++k) {
            cell[k] = static_cast<std::int64_t>(std::floor((x[k] - lo[k]) / h));
        }
        return cell;
    };

    struct Entry {
        Cell cell;
        int box;
    };
    std::vector<Cell> first(n);
    std::vector<Entry> entries;
    entries.reserve(8 * n);
    std::vector<int> large;
    std::vector<char> is_large(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        first[i] = cell_of(boxes[i].lo);
        const Cell last = cell_of(boxes[i].hi);
        const std::int64_t count =
            (last[0] - first[i][0] + 1) * (last[1] - first[i][1] + 1) * (last[2] - first[i][2] + 1);
        if (count > k_large_box_cells) {
            large.push_back(static_cast<int>(i));
            is_large[i] = 1;
            continue;
        }
        for (std::int64_t z = first[i][2]; z <= last[2]; ++z) {
            for (std::int64_t y = first[i][1]; y <= last[1]; ++y) {
                for (std::int64_t x = first[i][0]; x <= last[0]; ++x) {
                    entries.push_back({{x, y, z}, static_cast<int>(i)});
                }
            }
        }
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.cell != b.cell ? a.cell < b.cell : a.box < b.box;
    });

    for (std::size_t begin = 0; begin < entries.size();) {
        std::size_t end = begin + 1;
        while (end < entries.size() && entries[end].cell == entries[begin].cell) {
            ++end;
        }
        for (std::size_t s = begin; s < end; ++s) {
            for (std::size_t t = s + 1; t < end; ++t) {
                const int i = entries[s].box;
                const int j = entries[t].box;
                const Cell shared_first = {std::max(first[i][0], first[j][0]),
                                           std::max(first[i][1], first[j][1]),
                                           std::max(first[i][2], first[j][2])};
                if (shared_first == entries[s].cell && boxes_overlap(boxes[i], boxes[j])) {
                    visit(i, j);
                }
            }
        }
        begin = end;
    }
    for (const int i : large) {
        for (std::size_t j = 0; j < n; ++j) {
            const int other = static_cast<int>(j);
            if (other == i || (is_large[j] && other < i)) {
                continue;
            }
            if (boxes_overlap(boxes[i], boxes[j])) {
                visit(std::min(i, other), std::max(i, other));
            }
        }
    }
}

// ---- Reading a series -----------------------------------------------------------------------------------

/// Gathers VTK's error messages (instead of VTK printing them) so they can go into an InputError.
class VtkMessages : public vtkCommand {
public:
    static VtkMessages* New() { return new VtkMessages; }
    void Execute(vtkObject*, unsigned long event, void* data) override {
        if (event != vtkCommand::ErrorEvent || data == nullptr) {
            return; // warnings are dropped: the checks below decide what is wrong
        }
        // VTK's text is "ERROR: In <source>, line N\n<class> (<address>): <message>"; keep the message.
        std::string text = static_cast<const char*>(data);
        const std::size_t cut = text.find("): ");
        if (cut != std::string::npos) {
            text = text.substr(cut + 3);
        }
        text = text.substr(0, text.find('\n')); // the pipeline appends a dump of its request
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
            text.pop_back();
        }
        m_errors += (m_errors.empty() ? "" : "; ") + text;
    }
    const std::string& errors() const { return m_errors; }

private:
    std::string m_errors;
};

void observe(vtkObject* object, VtkMessages* messages) {
    object->AddObserver(vtkCommand::ErrorEvent, messages);
    object->AddObserver(vtkCommand::WarningEvent, messages);
}

std::string quoted(const fs::path& path) {
    return "'" + path.string() + "'";
}

/// The root `VTKFile` element of an XML file of the given `type`; the parser owns it.
vtkXMLDataElement*
parse_vtk_xml(vtkXMLDataParser* parser, const fs::path& file, const char* type, const std::string& fix) {
    vtkNew<VtkMessages> messages;
    observe(parser, messages);
    parser->SetFileName(file.string().c_str());
    const int parsed = parser->Parse();
    vtkXMLDataElement* root = parser->GetRootElement();
    const char* root_type = root != nullptr ? root->GetAttribute("type") : nullptr;
    if (parsed == 0 || root == nullptr || std::string(root->GetName()) != "VTKFile" || root_type == nullptr ||
        std::string(root_type) != type) {
        throw InputError(quoted(file) + " is not a VTK " + type + " file" +
                         (messages->errors().empty() ? "" : " (" + messages->errors() + ")") + "; " + fix);
    }
    return root;
}

struct SeriesEntry {
    double time;
    fs::path file;
};

const char* const k_rerun = "run the simulation again into this folder, or check a complete copy of it";

std::vector<SeriesEntry> read_series(const fs::path& pvd) {
    if (!fs::is_regular_file(pvd)) {
        throw InputError(quoted(pvd) +
                         " not found; give the folder that `intact run --output DIR` wrote (it holds "
                         "intact.pvd)");
    }
    vtkNew<vtkXMLDataParser> parser;
    vtkXMLDataElement* root = parse_vtk_xml(parser, pvd, "Collection", k_rerun);
    vtkXMLDataElement* collection = root->FindNestedElementWithName("Collection");
    if (collection == nullptr) {
        throw InputError(quoted(pvd) + " has no <Collection> element; " + k_rerun);
    }
    std::vector<SeriesEntry> entries;
    for (int i = 0; i < collection->GetNumberOfNestedElements(); ++i) {
        vtkXMLDataElement* data_set = collection->GetNestedElement(i);
        if (std::string(data_set->GetName()) != "DataSet") {
            continue;
        }
        // Part 1 of a step is the obstacles' geometry (placed from scene.resolved.json here instead).
        const char* part = data_set->GetAttribute("part");
        if (part != nullptr && std::string(part) != "0") {
            continue;
        }
        const char* file = data_set->GetAttribute("file");
        double time = 0.0;
        if (file == nullptr || data_set->GetScalarAttribute("timestep", time) == 0) {
            throw InputError(quoted(pvd) + ": <DataSet> " + std::to_string(i) +
                             " lacks its `file` or `timestep` attribute; " + k_rerun);
        }
        const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : pvd.parent_path() / file;
        if (!fs::is_regular_file(path)) {
            throw InputError(quoted(path) + ", listed in " + quoted(pvd) + ", not found; " + k_rerun +
                             " (a run that stopped early lists only the steps it finished)");
        }
        entries.push_back({time, path});
    }
    return entries;
}

/// The pieces a .pvtu lists, as paths.
std::vector<fs::path> read_piece_list(const fs::path& pvtu) {
    vtkNew<vtkXMLDataParser> parser;
    vtkXMLDataElement* root = parse_vtk_xml(parser, pvtu, "PUnstructuredGrid", k_rerun);
    vtkXMLDataElement* grid = root->FindNestedElementWithName("PUnstructuredGrid");
    if (grid == nullptr) {
        throw InputError(quoted(pvtu) + " has no <PUnstructuredGrid> element; " + k_rerun);
    }
    std::vector<fs::path> pieces;
    for (int i = 0; i < grid->GetNumberOfNestedElements(); ++i) {
        vtkXMLDataElement* piece = grid->GetNestedElement(i);
        if (std::string(piece->GetName()) != "Piece") {
            continue;
        }
        const char* source = piece->GetAttribute("Source");
        if (source == nullptr) {
            throw InputError(quoted(pvtu) + ": <Piece> without a `Source` attribute; " + k_rerun);
        }
        const fs::path path = fs::path(source).is_absolute() ? fs::path(source) : pvtu.parent_path() / source;
        if (!fs::is_regular_file(path)) {
            throw InputError(quoted(path) + ", listed in " + quoted(pvtu) + ", not found; " + k_rerun);
        }
        pieces.push_back(path);
    }
    return pieces;
}

/// One step's pieces merged into a scene-wide mesh.
struct SceneMesh {
    TetMesh mesh;
    std::vector<GlobalId> node_id;     ///< per node: its `global_id`
    std::vector<int> node_body;        ///< per node: the body of a tet that uses it (-1: unused)
    std::vector<GlobalId> tet_id;      ///< per tet: cell `global_id` (-1 when the pieces have none)
    std::vector<int> tet_body;         ///< per tet: cell `body` (-1 when the pieces have none)
    long long position_mismatches = 0; ///< nodes whose copies in different pieces disagree
};

/// Adds one piece to `scene`: nodes are merged by `global_id` (first copy's position kept), tets with a
/// cell `global_id` already seen are skipped.
void add_piece(const fs::path& file,
               SceneMesh& scene,
               std::unordered_map<GlobalId, int>& node_index,
               std::unordered_set<GlobalId>& seen_tets) {
    vtkNew<VtkMessages> messages;
    vtkNew<vtkXMLUnstructuredGridReader> reader;
    vtkNew<VtkMessages> pipeline_messages; // only "the reader failed", after the reader said why
    observe(reader, messages);
    observe(reader->GetExecutive(), pipeline_messages);
    reader->SetParserErrorObserver(messages);
    reader->SetReaderErrorObserver(messages);
    reader->SetFileName(file.string().c_str());
    reader->Update();
    vtkUnstructuredGrid* grid = reader->GetOutput();
    if (!messages->errors().empty() || !pipeline_messages->errors().empty() || grid == nullptr) {
        const std::string& why =
            messages->errors().empty() ? pipeline_messages->errors() : messages->errors();
        throw InputError(quoted(file) + " cannot be read as a VTK unstructured grid (" + why + "); " +
                         k_rerun);
    }
    const vtkIdType num_points = grid->GetNumberOfPoints();
    const vtkIdType num_cells = grid->GetNumberOfCells();
    vtkDataArray* point_ids = grid->GetPointData()->GetArray("global_id");
    if (point_ids == nullptr || point_ids->GetNumberOfTuples() != num_points ||
        point_ids->GetNumberOfComponents() != 1) {
        throw InputError(quoted(file) +
                         " has no point array `global_id` with one value per point; `intact check` reads "
                         "output written by `intact run`");
    }
    vtkDataArray* cell_ids = grid->GetCellData()->GetArray("global_id");
    vtkDataArray* cell_bodies = grid->GetCellData()->GetArray("body");

    std::vector<int> local_to_scene(static_cast<std::size_t>(num_points));
    for (vtkIdType p = 0; p < num_points; ++p) {
        const GlobalId id = point_ids->GetVariantValue(p).ToTypeInt64();
        Vec3 x;
        grid->GetPoint(p, x.data());
        const auto [it, inserted] = node_index.emplace(id, static_cast<int>(scene.mesh.nodes.size()));
        if (inserted) {
            scene.mesh.nodes.push_back(x);
            scene.node_id.push_back(id);
            scene.node_body.push_back(-1);
        } else if (scene.mesh.nodes[static_cast<std::size_t>(it->second)] != x) {
            ++scene.position_mismatches;
        }
        local_to_scene[static_cast<std::size_t>(p)] = it->second;
    }
    for (vtkIdType c = 0; c < num_cells; ++c) {
        if (grid->GetCellType(c) != VTK_TETRA) {
            throw InputError(quoted(file) + ": cell " + std::to_string(c) +
                             " is not a tetrahedron (VTK type " + std::to_string(grid->GetCellType(c)) +
                             "); `intact check` reads output written by `intact run`");
        }
        const GlobalId id = cell_ids != nullptr ? cell_ids->GetVariantValue(c).ToTypeInt64() : -1;
        if (cell_ids != nullptr && !seen_tets.insert(id).second) {
            continue;
        }
        const int body = cell_bodies != nullptr ? cell_bodies->GetVariantValue(c).ToInt() : -1;
        vtkIdType count = 0;
        const vtkIdType* points = nullptr;
        grid->GetCellPoints(c, count, points);
        std::array<int, 4> tet;
        for (int k = 0; k < 4; ++k) {
            tet[k] = local_to_scene[static_cast<std::size_t>(points[k])];
            scene.node_body[static_cast<std::size_t>(tet[k])] = body;
        }
        scene.mesh.tets.push_back(tet);
        scene.tet_id.push_back(id);
        scene.tet_body.push_back(body);
    }
}

/// Whether all three coordinates are finite.
bool finite(const Vec3& x) {
    return std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2]);
}

// ---- Obstacles -------------------------------------------------------------------------------------------

/// One entry of `obstacles` in scene.resolved.json, placed at time 0 (scale, rotate_deg, translate).
struct Obstacle {
    bool is_plane = true;
    Vec3 point{};            ///< plane: a point on it at time 0
    Vec3 normal{};           ///< plane: unit, to the free side
    TriMesh mesh;            ///< mesh: triangles, segments and points at time 0
    Vec3 velocity{};         ///< m/s, constant
    Vec3 angular_velocity{}; ///< rad/s, about `center`
    Vec3 center{};           ///< m, at time 0
    /// Where the rigid motion takes `x` (at time 0) at time t, as the simulator moves obstacle rows.
    Vec3 at(const Vec3& x, double t) const {
        const auto vec = [](const Vec3& v) { return kernels::Vec3(v[0], v[1], v[2]); };
        const kernels::Vec3 y =
            kernels::rigid_motion_position(vec(x), vec(velocity), vec(angular_velocity), vec(center), t);
        return {y(0), y(1), y(2)};
    }
};

/// The obstacles of a run, or why there are none to check.
struct Obstacles {
    bool checked = false;          ///< scene.resolved.json was found
    std::string note;              ///< the line logged before the steps
    std::vector<Obstacle> entries; ///< in the order of `obstacles`
};

const char* const k_resolved_fix =
    "fix: run the scene again into this folder to rewrite it, or correct the entry; an obstacle is "
    "{\"plane\": {\"point\": [x, y, z], \"normal\": [nx, ny, nz]}} or {\"mesh\": {\"file\": "
    "\"/path/x.obj\"}}, "
    "either with optional \"velocity\", \"angular_velocity\", \"center\", \"translate\", \"rotate_deg\" "
    "([x, y, z]) and \"scale\" (a number or [sx, sy, sz])";

[[noreturn]] void bad_obstacle(const fs::path& file, const std::string& key, const std::string& problem) {
    throw InputError(quoted(file) + ": key '" + key + "': " + problem + "; " + k_resolved_fix);
}

/// `parent[name]` as three finite numbers; `fallback` when absent and `required` is false.
Vec3 read_vec3(const nlohmann::json& parent,
               const char* name,
               const std::string& parent_key,
               const fs::path& file,
               bool required,
               const Vec3& fallback = Vec3{}) {
    const std::string key = parent_key + "." + name;
    if (!parent.contains(name)) {
        if (required) {
            bad_obstacle(file, key, "missing");
        }
        return fallback;
    }
    const nlohmann::json& value = parent.at(name);
    if (!value.is_array() || value.size() != 3 ||
        !std::all_of(value.begin(), value.end(), [](const nlohmann::json& c) { return c.is_number(); })) {
        bad_obstacle(file, key, "must be an array of three numbers, got " + value.dump());
    }
    Vec3 v;
    for (int k = 0; k < 3; ++k) {
        v[k] = value[static_cast<std::size_t>(k)].get<double>();
    }
    if (!finite(v)) {
        bad_obstacle(file, key, "must be finite, got " + value.dump());
    }
    return v;
}

/// The obstacles listed in `directory`/scene.resolved.json. Throws InputError (naming the file, the key and
/// the fix) when the file is there but malformed or an obstacle mesh cannot be read.
Obstacles read_obstacles(const fs::path& directory) {
    const fs::path file = directory / "scene.resolved.json";
    Obstacles obstacles;
    if (!fs::exists(file)) {
        obstacles.note = "obstacles not checked: " + quoted(file) +
                         " not found (output of an older Intact, or a copy without it); body triangles and "
                         "tetrahedra are checked";
        return obstacles;
    }
    std::ifstream in(file);
    if (!in) {
        throw InputError(quoted(file) + " cannot be opened; fix: make it readable, or remove it to skip the "
                                        "obstacle checks");
    }
    nlohmann::json scene;
    try {
        scene = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& error) {
        throw InputError(quoted(file) + " is not valid JSON (" + error.what() +
                         "); fix: run the scene again into this folder to rewrite it");
    }
    if (!scene.is_object()) {
        throw InputError(
            quoted(file) +
            " does not hold a JSON object; fix: run the scene again into this folder to rewrite it");
    }
    obstacles.checked = true;
    const nlohmann::json none = nlohmann::json::array();
    const nlohmann::json& list =
        scene.contains("obstacles") && !scene.at("obstacles").is_null() ? scene.at("obstacles") : none;
    if (!list.is_array()) {
        bad_obstacle(file, "obstacles", "must be an array of obstacles, got " + list.dump());
    }
    int planes = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string key = "obstacles[" + std::to_string(i) + "]";
        const nlohmann::json& entry = list[i];
        if (!entry.is_object() || entry.contains("plane") == entry.contains("mesh")) {
            bad_obstacle(file, key,
                         "must be an object with exactly one of \"plane\" and \"mesh\", got " + entry.dump());
        }
        Obstacle obstacle;
        obstacle.velocity = read_vec3(entry, "velocity", key, file, false);
        obstacle.angular_velocity = read_vec3(entry, "angular_velocity", key, file, false);
        obstacle.center = read_vec3(entry, "center", key, file, false);
        const Vec3 translate = read_vec3(entry, "translate", key, file, false);
        const Vec3 rotate_deg = read_vec3(entry, "rotate_deg", key, file, false);
        Vec3 scale{1.0, 1.0, 1.0};
        if (entry.contains("scale") && entry.at("scale").is_number()) {
            const double uniform = entry.at("scale").get<double>();
            scale = {uniform, uniform, uniform};
        } else {
            scale = read_vec3(entry, "scale", key, file, false, scale);
        }
        if (!(scale[0] > 0.0 && scale[1] > 0.0 && scale[2] > 0.0)) {
            bad_obstacle(file, key + ".scale", "must be positive");
        }
        if (entry.contains("plane")) {
            const nlohmann::json& plane = entry.at("plane");
            if (!plane.is_object()) {
                bad_obstacle(file, key + ".plane", "must be an object with \"point\" and \"normal\"");
            }
            obstacle.point = read_vec3(plane, "point", key + ".plane", file, true);
            obstacle.normal = read_vec3(plane, "normal", key + ".plane", file, true);
            if (obstacle.normal == Vec3{0.0, 0.0, 0.0}) {
                bad_obstacle(file, key + ".plane.normal", "must not be the zero vector");
            }
            obstacle.point = transform_point(obstacle.point, scale, rotate_deg, translate);
            obstacle.normal = transform_normal(obstacle.normal, scale, rotate_deg);
            ++planes;
        } else {
            obstacle.is_plane = false;
            const nlohmann::json& mesh = entry.at("mesh");
            if (!mesh.is_object() || !mesh.contains("file") || !mesh.at("file").is_string()) {
                bad_obstacle(file, key + ".mesh.file", "missing, or not a string");
            }
            // Written absolute; a relative path is taken relative to the output folder.
            fs::path path = mesh.at("file").get<std::string>();
            if (path.is_relative()) {
                path = directory / path;
            }
            try {
                obstacle.mesh = io::read_triangle_mesh(path.string());
            } catch (const InputError& error) {
                throw InputError(quoted(file) + ": key '" + key + ".mesh.file': " + error.what() +
                                 " (if the output was moved, copy the obstacle mesh to that path or edit it "
                                 "there)");
            }
            for (Vec3& x : obstacle.mesh.nodes) {
                x = transform_point(x, scale, rotate_deg, translate);
                if (!finite(x)) {
                    throw InputError(quoted(file) + ": key '" + key + ".mesh.file': " + quoted(path) +
                                     " has a non-finite vertex; fix: repair the obstacle mesh");
                }
            }
        }
        obstacles.entries.push_back(std::move(obstacle));
    }
    const int meshes = static_cast<int>(obstacles.entries.size()) - planes;
    const auto count = [](int n, const char* one, const char* many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    obstacles.note = "obstacles: " +
                     (obstacles.entries.empty()
                          ? std::string("none")
                          : count(planes, "plane", "planes") + ", " + count(meshes, "mesh", "meshes")) +
                     " in " + quoted(file);
    return obstacles;
}

// ---- Checks ---------------------------------------------------------------------------------------------

constexpr std::size_t k_max_examples = 5;

/// Whether two boundary triangles (node indices into `x`) meet in a way that is not mere adjacency; see
/// the header for the rule.
bool boundary_triangles_meet(const std::array<int, 3>& s,
                             const std::array<int, 3>& t,
                             const std::vector<Vec3>& x) {
    int shared = 0;
    int s_shared = 0;
    int t_shared = 0;
    for (int a = 0; a < 3; ++a) {
        for (int b = 0; b < 3; ++b) {
            if (s[a] == t[b]) {
                ++shared;
                s_shared = a;
                t_shared = b;
            }
        }
    }
    const auto at = [&](int node) -> const Vec3& { return x[static_cast<std::size_t>(node)]; };
    if (shared >= 2) {
        return false;
    }
    if (shared == 1) {
        const int s1 = s[(s_shared + 1) % 3];
        const int s2 = s[(s_shared + 2) % 3];
        const int t1 = t[(t_shared + 1) % 3];
        const int t2 = t[(t_shared + 2) % 3];
        return segment_meets_triangle(at(s1), at(s2), at(t[0]), at(t[1]), at(t[2])) ||
               segment_meets_triangle(at(t1), at(t2), at(s[0]), at(s[1]), at(s[2]));
    }
    return triangles_intersect({at(s[0]), at(s[1]), at(s[2])}, {at(t[0]), at(t[1]), at(t[2])});
}

std::string describe_triangle(const SceneMesh& scene, const std::array<int, 3>& tri) {
    std::ostringstream out;
    out << "body " << scene.node_body[static_cast<std::size_t>(tri[0])] << " triangle ("
        << scene.node_id[static_cast<std::size_t>(tri[0])] << ", "
        << scene.node_id[static_cast<std::size_t>(tri[1])] << ", "
        << scene.node_id[static_cast<std::size_t>(tri[2])] << ")";
    return out.str();
}

/// Adds the bounding box of triangle (a, b, c) to `boxes` unless a vertex is not finite.
bool add_box(const Vec3& a, const Vec3& b, const Vec3& c, std::vector<Box>& boxes) {
    if (!finite(a) || !finite(b) || !finite(c)) {
        return false;
    }
    Box box;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = std::min({a[k], b[k], c[k]});
        box.hi[k] = std::max({a[k], b[k], c[k]});
    }
    boxes.push_back(box);
    return true;
}

/// The parts of a mesh obstacle as (possibly degenerate) triangles: its triangles, then its segments
/// (a, b, b), then its vertices in no triangle or segment (p, p, p). triangles_intersect is exact for
/// degenerate triangles too, so one test covers triangle, segment and point contact.
std::vector<std::array<int, 3>> obstacle_items(const TriMesh& mesh) {
    std::vector<std::array<int, 3>> items = mesh.tris;
    std::vector<char> used(mesh.nodes.size(), 0);
    for (const auto& t : mesh.tris) {
        for (const int n : t) {
            used[static_cast<std::size_t>(n)] = 1;
        }
    }
    for (const auto& e : mesh.segments) {
        items.push_back({e[0], e[1], e[1]});
        used[static_cast<std::size_t>(e[0])] = used[static_cast<std::size_t>(e[1])] = 1;
    }
    for (std::size_t n = 0; n < mesh.nodes.size(); ++n) {
        if (!used[n]) {
            items.push_back({static_cast<int>(n), static_cast<int>(n), static_cast<int>(n)});
        }
    }
    return items;
}

/// "triangle i", "segment i" (0-based among the 'l' segments) or "point v" (0-based vertex index).
std::string obstacle_item_name(const TriMesh& mesh, int item) {
    const int triangles = static_cast<int>(mesh.tris.size());
    const int segments = static_cast<int>(mesh.segments.size());
    if (item < triangles) {
        return "triangle " + std::to_string(item);
    }
    if (item < triangles + segments) {
        return "segment " + std::to_string(item - triangles);
    }
    return "point " + std::to_string(obstacle_items(mesh)[static_cast<std::size_t>(item)][0]);
}

/// Whether x lies in the closed tet (a, b, c, d) of positive orientation. Exact.
bool in_closed_tet(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    return orient3d(x, b, c, d) >= 0 && orient3d(a, x, c, d) >= 0 && orient3d(a, b, x, d) >= 0 &&
           orient3d(a, b, c, x) >= 0;
}

/// Counts and examples of one merged step at time `time`, with the obstacles at that time.
void check_scene(const SceneMesh& scene,
                 const std::vector<Obstacle>& obstacles,
                 double time,
                 StepReport& report) {
    const std::vector<Vec3>& x = scene.mesh.nodes;
    std::vector<std::string> tet_examples;
    for (std::size_t t = 0; t < scene.mesh.tets.size(); ++t) {
        const auto& tet = scene.mesh.tets[t];
        const Vec3& x0 = x[static_cast<std::size_t>(tet[0])];
        const Vec3& x1 = x[static_cast<std::size_t>(tet[1])];
        const Vec3& x2 = x[static_cast<std::size_t>(tet[2])];
        const Vec3& x3 = x[static_cast<std::size_t>(tet[3])];
        const bool defined = finite(x0) && finite(x1) && finite(x2) && finite(x3);
        const int orientation = defined ? orient3d(x0, x1, x2, x3) : 0;
        if (defined && orientation > 0) {
            continue;
        }
        ++report.inverted_tets;
        if (tet_examples.size() < k_max_examples) {
            std::ostringstream out;
            out << "body " << scene.tet_body[t] << " tet " << scene.tet_id[t] << " (nodes "
                << scene.node_id[static_cast<std::size_t>(tet[0])] << ", "
                << scene.node_id[static_cast<std::size_t>(tet[1])] << ", "
                << scene.node_id[static_cast<std::size_t>(tet[2])] << ", "
                << scene.node_id[static_cast<std::size_t>(tet[3])] << ") is "
                << (!defined          ? "undefined (non-finite node position)"
                    : orientation < 0 ? "inverted"
                                      : "flat");
            tet_examples.push_back(out.str());
        }
    }

    // One broad phase over the body's boundary triangles followed by every obstacle triangle (at `time`);
    // box i < num_body is body triangle box_triangle[i], box i >= num_body is obstacle triangle
    // box_triangle[i] of obstacles[box_obstacle[i - num_body]].
    const Surface surface = extract_surface(scene.mesh);
    std::vector<Box> boxes;
    std::vector<int> box_triangle;
    boxes.reserve(surface.triangles.size());
    box_triangle.reserve(surface.triangles.size());
    for (std::size_t i = 0; i < surface.triangles.size(); ++i) {
        const auto& tri = surface.triangles[i];
        if (add_box(x[static_cast<std::size_t>(tri[0])], x[static_cast<std::size_t>(tri[1])],
                    x[static_cast<std::size_t>(tri[2])], boxes)) {
            box_triangle.push_back(static_cast<int>(i));
        } // else its tet is reported above
    }
    const std::size_t num_body = boxes.size();
    std::vector<std::vector<Vec3>> obstacle_nodes(obstacles.size()); // mesh obstacles at `time`
    std::vector<int> box_obstacle;
    for (std::size_t k = 0; k < obstacles.size(); ++k) {
        const Obstacle& obstacle = obstacles[k];
        if (obstacle.is_plane) {
            continue;
        }
        std::vector<Vec3>& y = obstacle_nodes[k];
        y.reserve(obstacle.mesh.nodes.size());
        for (const Vec3& rest : obstacle.mesh.nodes) {
            y.push_back(obstacle.at(rest, time));
        }
        const auto items = obstacle_items(obstacle.mesh);
        for (std::size_t i = 0; i < items.size(); ++i) {
            const auto& tri = items[i];
            if (add_box(y[static_cast<std::size_t>(tri[0])], y[static_cast<std::size_t>(tri[1])],
                        y[static_cast<std::size_t>(tri[2])], boxes)) {
                box_triangle.push_back(static_cast<int>(i));
                box_obstacle.push_back(static_cast<int>(k));
            }
        }
    }
    std::vector<std::string> obstacle_examples;
    for_each_overlapping_pair(boxes, [&](int i, int j) {
        if (static_cast<std::size_t>(i) >= num_body) {
            return; // two obstacle triangles (i < j)
        }
        const auto& s =
            surface.triangles[static_cast<std::size_t>(box_triangle[static_cast<std::size_t>(i)])];
        if (static_cast<std::size_t>(j) >= num_body) {
            const int k = box_obstacle[static_cast<std::size_t>(j) - num_body];
            const int o = box_triangle[static_cast<std::size_t>(j)];
            const TriMesh& mesh = obstacles[static_cast<std::size_t>(k)].mesh;
            const auto tri = obstacle_items(mesh)[static_cast<std::size_t>(o)];
            const std::vector<Vec3>& y = obstacle_nodes[static_cast<std::size_t>(k)];
            const auto at = [](const std::vector<Vec3>& p, int node) {
                return p[static_cast<std::size_t>(node)];
            };
            if (!triangles_intersect({at(x, s[0]), at(x, s[1]), at(x, s[2])},
                                     {at(y, tri[0]), at(y, tri[1]), at(y, tri[2])})) {
                return;
            }
            ++report.obstacle_triangle_pairs;
            if (obstacle_examples.size() < k_max_examples) {
                obstacle_examples.push_back(describe_triangle(scene, s) + " meets obstacles[" +
                                            std::to_string(k) + "] (mesh) " + obstacle_item_name(mesh, o));
            }
            return;
        }
        const auto& t =
            surface.triangles[static_cast<std::size_t>(box_triangle[static_cast<std::size_t>(j)])];
        if (!boundary_triangles_meet(s, t, x)) {
            return;
        }
        ++report.intersecting_pairs;
        if (report.examples.size() < k_max_examples) {
            report.examples.push_back(describe_triangle(scene, s) + " meets " + describe_triangle(scene, t));
        }
    });

    // Planes: the body's boundary triangles are the convex hulls of their vertices, so the body is strictly
    // on the free side iff every boundary vertex is.
    std::vector<std::string> plane_examples;
    std::vector<int> surface_nodes;
    for (const auto& tri : surface.triangles) {
        surface_nodes.insert(surface_nodes.end(), tri.begin(), tri.end());
    }
    std::sort(surface_nodes.begin(), surface_nodes.end());
    surface_nodes.erase(std::unique(surface_nodes.begin(), surface_nodes.end()), surface_nodes.end());
    for (std::size_t k = 0; k < obstacles.size(); ++k) {
        const Obstacle& plane = obstacles[k];
        if (!plane.is_plane) {
            continue;
        }
        const Vec3 point = plane.at(plane.point, time);
        const double length =
            std::sqrt(plane.normal[0] * plane.normal[0] + plane.normal[1] * plane.normal[1] +
                      plane.normal[2] * plane.normal[2]);
        for (const int node : surface_nodes) {
            const Vec3& p = x[static_cast<std::size_t>(node)];
            if (!finite(p)) {
                continue; // its tet is reported above
            }
            const int side = plane_side(p, point, plane.normal);
            if (side > 0) {
                continue;
            }
            ++report.vertices_behind_planes;
            if (plane_examples.size() < k_max_examples) {
                const double distance =
                    ((p[0] - point[0]) * plane.normal[0] + (p[1] - point[1]) * plane.normal[1] +
                     (p[2] - point[2]) * plane.normal[2]) /
                    length;
                std::ostringstream out;
                out << "body " << scene.node_body[static_cast<std::size_t>(node)] << " node "
                    << scene.node_id[static_cast<std::size_t>(node)] << " at (" << p[0] << ", " << p[1]
                    << ", " << p[2] << ") is ";
                if (side == 0) {
                    out << "on";
                } else if (distance < 0.0) {
                    out << -distance << " m behind";
                } else {
                    out << "behind (by less than the rounding error)";
                }
                out << " obstacles[" << k << "] (plane)";
                plane_examples.push_back(out.str());
            }
        }
    }
    // Mesh obstacle vertices inside a body: a point or a short pin can pass a surface between two output
    // steps and end up wholly inside. One broad phase over the tets followed by the vertices.
    std::vector<std::string> inside_examples;
    {
        std::vector<Box> volume;
        std::vector<int> tet_of;
        for (std::size_t t = 0; t < scene.mesh.tets.size(); ++t) {
            const auto& tet = scene.mesh.tets[t];
            Box box{x[static_cast<std::size_t>(tet[0])], x[static_cast<std::size_t>(tet[0])]};
            bool ok = true;
            for (const int n : tet) {
                const Vec3& p = x[static_cast<std::size_t>(n)];
                ok = ok && finite(p);
                for (int c = 0; c < 3; ++c) {
                    box.lo[c] = std::min(box.lo[c], p[c]);
                    box.hi[c] = std::max(box.hi[c], p[c]);
                }
            }
            if (ok) {
                volume.push_back(box);
                tet_of.push_back(static_cast<int>(t));
            }
        }
        const std::size_t num_tets = volume.size();
        std::vector<std::pair<int, int>> vertex_of; // (obstacle, vertex)
        for (std::size_t k = 0; k < obstacles.size(); ++k) {
            for (std::size_t n = 0; n < obstacle_nodes[k].size(); ++n) {
                const Vec3& p = obstacle_nodes[k][n];
                if (finite(p)) {
                    volume.push_back({p, p});
                    vertex_of.emplace_back(static_cast<int>(k), static_cast<int>(n));
                }
            }
        }
        std::set<std::pair<int, int>> reported;
        for_each_overlapping_pair(volume, [&](int i, int j) {
            if (static_cast<std::size_t>(i) >= num_tets || static_cast<std::size_t>(j) < num_tets) {
                return; // two tets or two vertices
            }
            const auto [k, n] = vertex_of[static_cast<std::size_t>(j) - num_tets];
            const auto& tet = scene.mesh.tets[static_cast<std::size_t>(tet_of[static_cast<std::size_t>(i)])];
            const Vec3& p = obstacle_nodes[static_cast<std::size_t>(k)][static_cast<std::size_t>(n)];
            if (!in_closed_tet(p, x[static_cast<std::size_t>(tet[0])], x[static_cast<std::size_t>(tet[1])],
                               x[static_cast<std::size_t>(tet[2])], x[static_cast<std::size_t>(tet[3])]) ||
                !reported.insert({k, n}).second) {
                return;
            }
            ++report.obstacle_vertices_inside;
            if (inside_examples.size() < k_max_examples) {
                inside_examples.push_back(
                    "obstacles[" + std::to_string(k) + "] (mesh) vertex " + std::to_string(n) +
                    " is inside body " +
                    std::to_string(
                        scene.tet_body[static_cast<std::size_t>(tet_of[static_cast<std::size_t>(i)])]));
            }
        });
    }
    for (const auto* extra : {&obstacle_examples, &plane_examples, &inside_examples, &tet_examples}) {
        report.examples.insert(report.examples.end(), extra->begin(), extra->end());
    }
}

/// N of "step_N.pvtu"; -1 for another name.
int step_number(const fs::path& file) {
    const std::string stem = file.stem().string();
    const std::string prefix = "step_";
    if (stem.size() <= prefix.size() || stem.size() > prefix.size() + 9 ||
        stem.compare(0, prefix.size(), prefix) != 0) {
        return -1;
    }
    for (std::size_t i = prefix.size(); i < stem.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(stem[i]))) {
            return -1;
        }
    }
    return std::stoi(stem.substr(prefix.size()));
}

} // namespace

int orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    const double bax = b[0] - a[0];
    const double bay = b[1] - a[1];
    const double baz = b[2] - a[2];
    const double cax = c[0] - a[0];
    const double cay = c[1] - a[1];
    const double caz = c[2] - a[2];
    const double dax = d[0] - a[0];
    const double day = d[1] - a[1];
    const double daz = d[2] - a[2];
    const double m1 = cay * daz;
    const double m2 = caz * day;
    const double m3 = day * baz;
    const double m4 = daz * bay;
    const double m5 = bay * caz;
    const double m6 = baz * cay;
    const double det = bax * (m1 - m2) + cax * (m3 - m4) + dax * (m5 - m6);
    const double permanent = std::abs(bax) * (std::abs(m1) + std::abs(m2)) +
                             std::abs(cax) * (std::abs(m3) + std::abs(m4)) +
                             std::abs(dax) * (std::abs(m5) + std::abs(m6));
    const double bound = k_orient3d_bound * permanent;
    if (det > bound || -det > bound) {
        return sign_of(det);
    }
    return orient3d_exact(a, b, c, d);
}

bool triangles_intersect(const std::array<Vec3, 3>& t, const std::array<Vec3, 3>& u) {
    for (int k = 0; k < 3; ++k) {
        const double t_lo = std::min({t[0][k], t[1][k], t[2][k]});
        const double t_hi = std::max({t[0][k], t[1][k], t[2][k]});
        const double u_lo = std::min({u[0][k], u[1][k], u[2][k]});
        const double u_hi = std::max({u[0][k], u[1][k], u[2][k]});
        if (t_hi < u_lo || u_hi < t_lo) {
            return false;
        }
    }
    // One triangle strictly on one side of the other's plane: apart (cheap and common).
    const auto apart = [](const std::array<Vec3, 3>& plane, const std::array<Vec3, 3>& other) {
        const int s0 = orient3d(plane[0], plane[1], plane[2], other[0]);
        const int s1 = orient3d(plane[0], plane[1], plane[2], other[1]);
        const int s2 = orient3d(plane[0], plane[1], plane[2], other[2]);
        return (s0 > 0 && s1 > 0 && s2 > 0) || (s0 < 0 && s1 < 0 && s2 < 0);
    };
    if (apart(t, u) || apart(u, t)) {
        return false;
    }
    // Closed triangles meet iff an edge of one meets the other: the ends of their common part lie on edges.
    for (int e = 0; e < 3; ++e) {
        if (segment_meets_triangle(t[e], t[(e + 1) % 3], u[0], u[1], u[2]) ||
            segment_meets_triangle(u[e], u[(e + 1) % 3], t[0], t[1], t[2])) {
            return true;
        }
    }
    return false;
}

bool surface_triangles_meet(const std::array<int, 3>& s,
                            const std::array<int, 3>& t,
                            const std::vector<Vec3>& x) {
    return boundary_triangles_meet(s, t, x);
}

bool CheckReport::clean() const {
    return std::all_of(steps.begin(), steps.end(), [](const StepReport& step) { return step.clean(); });
}

CheckReport check_output(const std::string& directory, std::ostream& log) {
    const fs::path pvd = fs::path(directory) / "intact.pvd";
    const std::vector<SeriesEntry> series = read_series(pvd);
    const Obstacles obstacles = read_obstacles(fs::path(directory));
    log << obstacles.note << "\n";

    CheckReport report;
    report.obstacles_checked = obstacles.checked;
    for (const Obstacle& obstacle : obstacles.entries) {
        ++(obstacle.is_plane ? report.planes : report.obstacle_meshes);
    }
    const bool any_obstacles = !obstacles.entries.empty();
    StepReport total;
    int bad_steps = 0;
    for (std::size_t s = 0; s < series.size(); ++s) {
        SceneMesh scene;
        std::unordered_map<GlobalId, int> node_index;
        std::unordered_set<GlobalId> seen_tets;
        for (const fs::path& piece : read_piece_list(series[s].file)) {
            add_piece(piece, scene, node_index, seen_tets);
        }

        StepReport step;
        const int number = step_number(series[s].file);
        step.step_index = number >= 0 ? number : static_cast<int>(s);
        step.time = series[s].time;
        step.file = series[s].file.string();
        check_scene(scene, obstacles.entries, step.time, step);

        log << "step " << step.step_index << " t=" << step.time << ": " << step.intersecting_pairs
            << " intersecting triangle pairs, " << step.inverted_tets << " inverted tetrahedra";
        if (any_obstacles) {
            log << ", " << step.obstacle_triangle_pairs << " body-obstacle triangle pairs, "
                << step.vertices_behind_planes << " vertices on or behind planes";
            if (step.obstacle_vertices_inside > 0) {
                log << ", " << step.obstacle_vertices_inside << " obstacle vertices inside bodies";
            }
        }
        log << "\n";
        for (const std::string& example : step.examples) {
            log << "  " << example << "\n";
        }
        if (scene.position_mismatches > 0) {
            log << "  warning: " << scene.position_mismatches
                << " nodes have different positions in different pieces (the first piece's is used)\n";
        }
        total.intersecting_pairs += step.intersecting_pairs;
        total.inverted_tets += step.inverted_tets;
        total.obstacle_triangle_pairs += step.obstacle_triangle_pairs;
        total.vertices_behind_planes += step.vertices_behind_planes;
        total.obstacle_vertices_inside += step.obstacle_vertices_inside;
        bad_steps += step.clean() ? 0 : 1;
        report.steps.push_back(std::move(step));
    }

    log << "checked " << series.size() << " steps of " << directory << ": ";
    if (report.clean()) {
        log << "clean (no intersecting triangles, no inverted tetrahedra"
            << (!obstacles.checked ? "; obstacles not checked"
                : any_obstacles    ? ", nothing on or through an obstacle"
                                   : "")
            << ")\n";
    } else {
        log << "NOT clean: " << bad_steps << " steps with problems, " << total.intersecting_pairs
            << " intersecting triangle pairs and " << total.inverted_tets << " inverted tetrahedra";
        if (any_obstacles) {
            log << ", " << total.obstacle_triangle_pairs << " body-obstacle triangle pairs, "
                << total.obstacle_vertices_inside << " obstacle vertices inside bodies and "
                << total.vertices_behind_planes << " vertices on or behind planes";
        }
        log << " in all" << (obstacles.checked ? "" : " (obstacles not checked)") << "\n";
    }
    log.flush();
    return report;
}

} // namespace intact::tools
