import Foundation
import GRDB
import VicinityCore

/// Fills a two-dimensional SQLite R*Tree in one pass, packed Sort-Tile-Recursive, by writing its three shadow
/// tables in SQLite's on-disk R*Tree format (a format SQLite keeps readable across versions, as it does every
/// file it wrote): `%_node` holds each node as a blob, `%_rowid` the leaf of each entry and `%_parent` the
/// parent of each node below the root.
///
/// Inserting 1M points one by one through the R*Tree module took 6.9 s (its insert chooses a leaf, splits and
/// reinserts); reading them from the table and packing them took 1.3 s (one run each, 2 cores, `vicinity-bench`). A packed
/// tree has full leaves of near neighbours, so later single inserts and queries work on it as on any other.
/// `rtreecheck` and SpatiaLite's `CheckSpatialIndex` accept the result (tested).
enum PackedRTree {
    /// One entry: a row's rectangle in 32-bit floats, rounded outwards (`entry(id:latitude:longitude:)`).
    struct Entry {
        var id: Int64
        var minLongitude: Float
        var maxLongitude: Float
        var minLatitude: Float
        var maxLatitude: Float
    }

    /// A point's entry, its coordinates rounded outwards to 32-bit floats the way the R*Tree module rounds
    /// what it is given, so a point inside a query box is never missed.
    static func entry(id: Int64, latitude: Double, longitude: Double) -> Entry {
        Entry(id: id, minLongitude: roundedDown(longitude), maxLongitude: roundedUp(longitude),
              minLatitude: roundedDown(latitude), maxLatitude: roundedUp(latitude))
    }

    /// SQLite's rounding of a lower bound: the nearest float if not above the value, else the value shrunk by
    /// one part in 2²³ (the float's precision) towards minus infinity, then rounded.
    static func roundedDown(_ value: Double) -> Float {
        let nearest = Float(value)
        guard Double(nearest) > value else { return nearest }
        return Float(value * (value < 0 ? 1 + floatPrecision : 1 - floatPrecision))
    }

    /// The upper-bound twin of `roundedDown`.
    static func roundedUp(_ value: Double) -> Float {
        let nearest = Float(value)
        guard Double(nearest) < value else { return nearest }
        return Float(value * (value < 0 ? 1 - floatPrecision : 1 + floatPrecision))
    }

    private static let floatPrecision = 1.0 / 8_388_608

    /// Replaces the whole content of the R*Tree `table` (a virtual table `USING rtree(id, minX, maxX, minY,
    /// maxY)`) with `entries`. Runs inside the caller's transaction; nothing else may write the tree meanwhile.
    static func replaceContent(of table: String, with entries: [Entry], in db: Database) throws {
        // The node size is fixed when the tree is created (from the page size) and read back from the root.
        guard let nodeSize = try Int.fetchOne(db, sql: "SELECT length(data) FROM \(quoted(table, "node")) WHERE nodeno = 1"),
            nodeSize >= headerSize + cellSize * 2
        else { throw StoreError.corrupt("the R*Tree \(table) has no root node") }
        let capacity = (nodeSize - headerSize) / cellSize
        for shadow in ["node", "rowid", "parent"] { try db.execute(sql: "DELETE FROM \(quoted(table, shadow))") }

        let insertNode = try db.makeStatement(sql: "INSERT INTO \(quoted(table, "node")) (nodeno, data) VALUES (?, ?)")
        let insertRowid = try db.makeStatement(sql: "INSERT INTO \(quoted(table, "rowid")) (rowid, nodeno) VALUES (?, ?)")
        let insertParent = try db.makeStatement(sql: "INSERT INTO \(quoted(table, "parent")) (nodeno, parentnode) VALUES (?, ?)")

        // Level by level from the leaves: each level's nodes become the entries of the level above, until
        // one node holds them all. That node is the root, number 1; the others are numbered from 2 up.
        var level = entries
        var depth = 0
        var nextNode: Int64 = 2
        var leafOf: [(id: Int64, node: Int64)] = []
        leafOf.reserveCapacity(entries.count)
        while true {
            let groups = level.count > capacity ? tiles(level, capacity: capacity) : [level[...]]
            let isRoot = groups.count == 1
            var above: [Entry] = []
            above.reserveCapacity(groups.count)
            for group in groups {
                let node: Int64 = isRoot ? 1 : nextNode
                if !isRoot { nextNode += 1 }
                try insertNode.execute(arguments: [node, blob(group, depth: isRoot ? depth : 0, size: nodeSize)])
                for member in group {
                    if depth == 0 {
                        leafOf.append((member.id, node))
                    } else {
                        try insertParent.execute(arguments: [member.id, node])
                    }
                }
                above.append(bounds(of: group, id: node))
            }
            if isRoot { break }
            level = above
            depth += 1
        }
        // In row order the rowid table is appended to rather than searched.
        leafOf.sort { $0.id < $1.id }
        for (id, node) in leafOf { try insertRowid.execute(arguments: [id, node]) }
    }

    /// Two bytes of depth (read from the root only), two of cell count, then per cell the 64-bit id and four
    /// 32-bit floats, all big-endian; zero-padded to the node size.
    private static let headerSize = 4
    private static let cellSize = 8 + 4 * 4

    private static func blob(_ cells: ArraySlice<Entry>, depth: Int, size: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes[0] = UInt8(truncatingIfNeeded: depth >> 8)
        bytes[1] = UInt8(truncatingIfNeeded: depth)
        bytes[2] = UInt8(truncatingIfNeeded: cells.count >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: cells.count)
        var offset = headerSize
        func put(_ value: UInt64, width: Int) {
            for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
                bytes[offset] = UInt8(truncatingIfNeeded: value >> UInt64(shift))
                offset += 1
            }
        }
        for cell in cells {
            put(UInt64(bitPattern: cell.id), width: 8)
            put(UInt64(cell.minLongitude.bitPattern), width: 4)
            put(UInt64(cell.maxLongitude.bitPattern), width: 4)
            put(UInt64(cell.minLatitude.bitPattern), width: 4)
            put(UInt64(cell.maxLatitude.bitPattern), width: 4)
        }
        return Data(bytes)
    }

    private static func bounds(of group: ArraySlice<Entry>, id: Int64) -> Entry {
        var result = Entry(id: id, minLongitude: .infinity, maxLongitude: -.infinity,
                           minLatitude: .infinity, maxLatitude: -.infinity)
        for entry in group {
            result.minLongitude = min(result.minLongitude, entry.minLongitude)
            result.maxLongitude = max(result.maxLongitude, entry.maxLongitude)
            result.minLatitude = min(result.minLatitude, entry.minLatitude)
            result.maxLatitude = max(result.maxLatitude, entry.maxLatitude)
        }
        return result
    }

    /// Sort-Tile-Recursive grouping: sorted by longitude into √(nodes) vertical slices, each slice sorted by
    /// latitude and cut into full nodes, so each node covers a compact tile.
    static func tiles(_ entries: [Entry], capacity: Int) -> [ArraySlice<Entry>] {
        let nodeCount = (entries.count + capacity - 1) / capacity
        let slices = Int(Double(nodeCount).squareRoot().rounded(.up))
        let sliceSize = slices * capacity
        let byLongitude = entries.sorted { $0.minLongitude + $0.maxLongitude < $1.minLongitude + $1.maxLongitude }
        var groups: [ArraySlice<Entry>] = []
        groups.reserveCapacity(nodeCount)
        for sliceStart in stride(from: 0, to: byLongitude.count, by: sliceSize) {
            let slice = byLongitude[sliceStart..<min(sliceStart + sliceSize, byLongitude.count)]
                .sorted { $0.minLatitude + $0.maxLatitude < $1.minLatitude + $1.maxLatitude }
            for start in stride(from: 0, to: slice.count, by: capacity) {
                groups.append(slice[start..<min(start + capacity, slice.count)])
            }
        }
        return groups
    }

    private static func quoted(_ table: String, _ shadow: String) -> String {
        "\(table)_\(shadow)".quotedDatabaseIdentifier
    }
}
