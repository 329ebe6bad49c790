// weft native geometry: hash-grid neighbour queries in kernels. A query visits every point stored in the hashed
// cells overlapped by [p - r, p + r] (each hashed cell at most once), yielding original point ids.
#pragma once
#include "registry.h"
#include "data.h"
#include "../vec.h"
#include "../error.h"

namespace weft {

struct hash_grid_query_t {
    const geo::HashGridData* grid;
    int32 lo[3];     // first cell along each axis
    int32 n[3];      // number of cells along each axis (at most the grid dimension)
    int32 cell;      // per-cell walk (sparse builds): linear counter over the n[0] * n[1] * n[2] cells; row walk
                     // (dense builds): counter over the n[1] * n[2] rows, or -1 - row while a wrapped row's second
                     // run of cells is pending
    int32 cur;       // position in sorted_ids
    int32 end;
    int32 group;     // only points of this group (grouped query of a grouped build)
    int32 grouped;   // 1: filter by group (every int32 is a valid group id), 0: all points
    int32 rows;      // 1: row walk (every cell's [start, end) is set, so a run of cells is one range), 0: per cell
};

namespace geo {
WEFT_FN const HashGridData* hash_grid(uint64 id, const char* what) {
    const HashGridData* g = static_cast<const HashGridData*>(lookup(registry(), id, KIND_HASHGRID));
    if (g == nullptr) report_error(4, what);
    return g;
}
}  // namespace geo

// The query point's cells are computed in the precision the grid was built in, so they match the build exactly.
template <typename V, typename S>
WEFT_FN hash_grid_query_t hash_grid_query_impl(uint64 id, const V& p, S radius_in, int32 group, int32 grouped) {
    hash_grid_query_t q = {};
    q.grouped = grouped;
    q.grid = geo::hash_grid(id, "hash_grid_query: argument 'id' is not a live HashGrid (never created, destroyed, or another kind of object)");
    q.cur = 0;
    q.end = 0;
    q.cell = 0;
    q.group = group;
    if (q.grid == nullptr || q.grid->sorted_ids == nullptr || q.grid->num_points == 0) {
        q.n[0] = q.n[1] = q.n[2] = 0;
        return q;
    }
    const double radius = double(radius_in);
    const double r = radius > 0.0 ? radius : 0.0;
    for (int k = 0; k < 3; ++k) {
        int32 a, b;
        if (q.grid->precision == 64) {
            a = geo::cell_coord_d(double(p.c[k]) - r, q.grid->inv_cell_width_d);
            b = geo::cell_coord_d(double(p.c[k]) + r, q.grid->inv_cell_width_d);
        } else {
            const float x = float(p.c[k]), rf = float(r);
            a = geo::cell_coord(x - rf, q.grid->inv_cell_width);
            b = geo::cell_coord(x + rf, q.grid->inv_cell_width);
        }
        q.lo[k] = a;
        const int64 count = int64(b) - int64(a) + 1;
        q.n[k] = count > q.grid->dim[k] ? q.grid->dim[k] : int32(count < 1 ? 1 : count);
    }
    // a dense build sets every cell's range and sorts by hashed cell, so the cells x0..x1 of a row (consecutive
    // hashed cells) hold one contiguous range of sorted_ids: a query reads 9 ranges instead of 27 cells, and yields
    // the same points in the same order as the per-cell walk
    q.rows = q.grid->occupied_valid ? 0 : 1;
    return q;
}

template <typename V, typename S>
WEFT_FN hash_grid_query_t hash_grid_query(uint64 id, const V& p, S radius) {
    return hash_grid_query_impl(id, p, radius, 0, 0);
}

template <typename V, typename S>
WEFT_FN hash_grid_query_t hash_grid_query(uint64 id, const V& p, S radius, int32 group) {
    return hash_grid_query_impl(id, p, radius, group, 1);
}

namespace geo {
// Moves a query to its next non-empty run of cells; false when none is left.
WEFT_FN bool hash_grid_advance(hash_grid_query_t& q) {
    const HashGridData* g = q.grid;
    if (!q.rows) {
        const int32 total = q.n[0] * q.n[1] * q.n[2];
        while (q.cur >= q.end) {
            if (q.cell >= total) return false;
            const int32 c = q.cell++;
            const int32 x = q.lo[0] + c % q.n[0];
            const int32 y = q.lo[1] + (c / q.n[0]) % q.n[1];
            const int32 z = q.lo[2] + c / (q.n[0] * q.n[1]);
            const int32 h = hashed_cell(g, x, y, z);
            q.cur = g->cell_starts[h];
            q.end = g->cell_ends[h];
        }
        return true;
    }
    const int32 total = q.n[1] * q.n[2];
    const int32 x0 = wrap(q.lo[0], g->dim[0]);
    while (q.cur >= q.end) {
        int32 row = q.cell;
        const bool second = row < 0;  // the wrapped part (cells 0..) of row -1 - row
        if (second) row = -1 - row;
        else if (row >= total) return false;
        const int32 y = q.lo[1] + row % q.n[1];
        const int32 z = q.lo[2] + row / q.n[1];
        const int32 base = hashed_cell(g, 0, y, z);
        const int32 past = x0 + q.n[0] - g->dim[0];  // cells of the row beyond the grid's last column, > 0: wrapped
        if (second) {
            q.cur = g->cell_starts[base];
            q.end = g->cell_ends[base + past - 1];
            q.cell = row + 1;
        } else if (past > 0) {
            q.cur = g->cell_starts[base + x0];
            q.end = g->cell_ends[base + g->dim[0] - 1];
            q.cell = -1 - row;
        } else {
            q.cur = g->cell_starts[base + x0];
            q.end = g->cell_ends[base + x0 + q.n[0] - 1];
            q.cell = row + 1;
        }
    }
    return true;
}
}  // namespace geo

WEFT_FN bool hash_grid_query_next(hash_grid_query_t& q, int32& index) {
    const geo::HashGridData* g = q.grid;
    if (g == nullptr) return false;
    while (true) {
        if (__builtin_expect(q.cur >= q.end, 0) && !geo::hash_grid_advance(q)) return false;
        const int32 pos = q.cur++;
        if (q.grouped && g->sorted_groups != nullptr && g->sorted_groups[pos] != q.group) continue;
        index = g->sorted_ids[pos];
        return true;
    }
}

// ``index`` keeps its previous value when the query is exhausted, as the in-place form leaves it.
WEFT_FN void hash_grid_query_step(const hash_grid_query_t& q, int32 index_in, bool& ok, hash_grid_query_t& q_next,
                                  int32& index) {
    q_next = q;
    index = index_in;
    ok = hash_grid_query_next(q_next, index);
}

// Lane runs (weft/backend/lanes.py): threads whose query states (and indices) are equal walk one candidate stream.
WEFT_FN bool lanes_equal(const hash_grid_query_t& a, const hash_grid_query_t& b) {
    return a.grid == b.grid && a.lo[0] == b.lo[0] && a.lo[1] == b.lo[1] && a.lo[2] == b.lo[2] && a.n[0] == b.n[0] &&
           a.n[1] == b.n[1] && a.n[2] == b.n[2] && a.cell == b.cell && a.cur == b.cur && a.end == b.end &&
           a.group == b.group && a.grouped == b.grouped && a.rows == b.rows;
}
template <typename T>
WEFT_FN bool lanes_equal(const T& a, const T& b) {
    return a == b;
}

WEFT_FN int32 hash_grid_point_id(uint64 id, int32 index) {
    const geo::HashGridData* g = geo::hash_grid(id, "hash_grid_point_id: argument 'id' is not a live HashGrid");
    if (g == nullptr || g->sorted_ids == nullptr || index < 0 || index >= g->num_points) return -1;
    return g->sorted_ids[index];
}

}  // namespace weft
