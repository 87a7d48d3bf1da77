import GeoCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Something with an identity and a point on the map, which a `PointGrid` can hold.
public protocol Located: Sendable {
    associatedtype ID: Hashable & Comparable & Sendable
    var id: ID { get }
    var coordinate: Coordinate { get }
}

extension Place: Located {}

/// Located things in memory, bucketed by a fixed latitude/longitude grid, for exact radius and nearest searches
/// without a database on the read path.
///
/// Each thing is in one cell of the grid of all things and one cell of the grid of its group (a place's
/// category), so that a search for a rare group walks only that group's cells. A cell keeps its members in
/// latitude order with their exact coordinates, so a search reads the band of latitudes its bounding box spans,
/// checks longitude, and measures what remains by haversine without touching memory elsewhere. Answers are
/// ranked as `Ranking` ranks: by distance, then id.
///
/// A value type without locking; `SharedIndex` makes one safe to read from many threads.
public struct PointGrid<Item: Located, Group: Hashable & Sendable>: Sendable {
    /// One thing in a cell: its slot, its exact coordinate (so that measuring it reads no other memory) and
    /// the sine of its latitude, which orders the cell.
    struct Member: Sendable {
        var coordinate: Coordinate
        var slot: Int32
        var z: Float
    }

    typealias Cells = [Int64: [Member]]

    /// 1/256 of a degree: about 434 m of latitude. A 1000 m query (the service's standard radius) then reads
    /// 5 × 5 to 6 × 6 cells at mid latitudes, and a cell of a dense city (1M points in 50 × 50 km) holds about
    /// 63 points, so the 20 nearest are usually found within the centre's cell and its neighbours.
    static var cellsPerDegree: Double { 256 }
    static var rows: Int64 { 180 * 256 }
    static var columns: Int64 { 360 * 256 }

    private let groupOf: @Sendable (Item) -> Group
    private var items: [Item?] = []
    private var slots: [Item.ID: Int32] = [:]
    private var freeSlots: [Int32] = []
    private var everything: Cells = [:]
    private var groups: [Group: Cells] = [:]
    private var groupCounts: [Group: Int] = [:]

    public init(group: @escaping @Sendable (Item) -> Group) {
        groupOf = group
    }

    /// How many things the grid holds.
    public var count: Int { slots.count }

    /// How many things of each group the grid holds.
    public var countsByGroup: [Group: Int] { groupCounts }

    public func item(_ id: Item.ID) -> Item? {
        slots[id].flatMap { items[Int($0)] }
    }

    /// Makes room for `capacity` things, for a load whose size is known.
    public mutating func reserveCapacity(_ capacity: Int) {
        items.reserveCapacity(capacity)
        slots.reserveCapacity(capacity)
    }

    /// Adds the thing, or replaces the one with its id.
    public mutating func insert(_ item: Item) {
        remove(item.id)
        let (slot, group, cell, member) = place(item)
        Self.insertMember(member, at: cell, into: &everything)
        Self.insertMember(member, at: cell, into: &groups[group, default: [:]])
        groupCounts[group, default: 0] += 1
    }

    /// Adds many things at once, as a load from the store of record does: members are appended and each cell is
    /// sorted once at the end, instead of being kept in order insert by insert.
    ///
    /// The things are given their slots cell by cell, so that the things a search reads (those of a few
    /// neighbouring cells) lie side by side in memory: in load order, each of a 500-place answer over a million
    /// places was a cache miss of its own, a fifth of the answer's time. Where an id repeats, the last copy is
    /// the one kept, as one insert after another would keep it.
    public mutating func insert(contentsOf loaded: some Sequence<Item>) {
        let batch = Array(loaded)
        var lastCopy: [Item.ID: Int] = [:]
        lastCopy.reserveCapacity(batch.count)
        for (index, item) in batch.enumerated() { lastCopy[item.id] = index }
        var layout: [(cell: Int64, index: Int)] = []
        layout.reserveCapacity(lastCopy.count)
        for (index, item) in batch.enumerated() where lastCopy[item.id] == index {
            layout.append((Self.cell(of: item.coordinate), index))
        }
        layout.sort { $0.cell != $1.cell ? $0.cell < $1.cell : $0.index < $1.index }
        var touched: Set<Int64> = []
        var touchedGroups: [Group: Set<Int64>] = [:]
        for (_, index) in layout {
            let item = batch[index]
            remove(item.id)
            let (_, group, cell, member) = place(item)
            everything[cell, default: []].append(member)
            groups[group, default: [:]][cell, default: []].append(member)
            groupCounts[group, default: 0] += 1
            touched.insert(cell)
            touchedGroups[group, default: []].insert(cell)
        }
        for cell in touched { everything[cell]?.sort { $0.z < $1.z } }
        for (group, cells) in touchedGroups {
            for cell in cells { groups[group]?[cell]?.sort { $0.z < $1.z } }
        }
    }

    /// Gives the thing a slot; returns what its cells need.
    private mutating func place(_ item: Item) -> (slot: Int32, group: Group, cell: Int64, member: Member) {
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            items[Int(slot)] = item
        } else {
            slot = Int32(items.count)
            items.append(item)
        }
        slots[item.id] = slot
        return (slot, groupOf(item), Self.cell(of: item.coordinate), Self.member(slot: slot, at: item.coordinate))
    }

    /// Removes the thing with this id, if the grid holds it.
    public mutating func remove(_ id: Item.ID) {
        guard let slot = slots.removeValue(forKey: id), let item = items[Int(slot)] else { return }
        let group = groupOf(item)
        let cell = Self.cell(of: item.coordinate)
        let member = Self.member(slot: slot, at: item.coordinate)
        Self.removeMember(member, at: cell, from: &everything)
        Self.removeMember(member, at: cell, from: &groups[group, default: [:]])
        if groups[group]?.isEmpty == true { groups[group] = nil }
        groupCounts[group, default: 0] -= 1
        if groupCounts[group] == 0 { groupCounts[group] = nil }
        items[Int(slot)] = nil
        freeSlots.append(slot)
    }

    /// The things of the groups (all when `groups` is empty) within `radius` of `centre` that rank after
    /// `after` and pass `included`, nearest first, at most `limit`.
    ///
    /// The search starts in a small circle and widens it until the circle holds `limit` answers or reaches
    /// `radius`: a circle of radius r holds every thing within r, so its `limit` nearest are the answer once
    /// it has that many. Few answers near the centre therefore cost a few cells, not the whole radius.
    ///
    /// A later page (`after` a cursor at distance d) reads a ring, not the disc: the first ring has the area
    /// the first circle would have, and cells wholly nearer than d are skipped, so the tenth page of a long
    /// answer costs about what the first does.
    public func nearest(
        to centre: Coordinate, within radius: Distance, groups wanted: Set<Group> = [],
        after: (distance: Distance, id: Item.ID)? = nil, limit: Int, where included: ((Item) -> Bool)? = nil
    ) -> [(item: Item, distance: Distance)] {
        nearest(to: centre, within: radius, groups: wanted, after: after, limit: limit, where: included) { ($0, $1) }
    }

    /// `nearest`, each thing given as `answer` makes it of the thing and its distance: a caller that wraps every
    /// thing (a place in a `PlaceHit`) copies each once, with no array of pairs between.
    public func nearest<Answer>(
        to centre: Coordinate, within radius: Distance, groups wanted: Set<Group> = [],
        after: (distance: Distance, id: Item.ID)? = nil, limit: Int, where included: ((Item) -> Bool)? = nil,
        as answer: (Item, Distance) -> Answer
    ) -> [Answer] {
        guard limit > 0, radius.meters >= 0 else { return [] }
        let cellSets = cells(for: wanted)
        guard !cellSets.isEmpty else { return [] }
        let floor = after?.distance.meters ?? 0
        let first = firstReach(around: centre, in: cellSets, wanting: limit, withinOneCell: floor == 0)
        var reach = min(radius.meters, (floor * floor + first * first).squareRoot())
        while true {
            let hits = collect(cellSets, around: centre, within: reach, after: after, where: included)
            if hits.count >= limit || reach >= radius.meters {
                return ranked(hits, limit: limit, as: answer)
            }
            // Grow to the area that would hold a quarter more than `limit` at the density just seen, so that the
            // next read measures few more than it answers with (doubling the radius read four times the area
            // whatever was missing): half as much again at least, and at most sixteen times, as a handful of hits
            // says little about the density; four times, as doubling did, when nothing was seen.
            let seen = reach * reach - floor * floor
            let factor = hits.isEmpty ? 4 : min(16, max(1.5, 1.25 * Double(limit) / Double(hits.count)))
            reach = min(radius.meters, (floor * floor + seen * factor).squareRoot())
        }
    }

    /// The nearest thing of the groups (any when `groups` is empty), however far; nil only when there is none.
    public func closest(to centre: Coordinate, groups wanted: Set<Group> = []) -> (item: Item, distance: Distance)? {
        let cellSets = cells(for: wanted)
        guard !cellSets.isEmpty else { return nil }
        var reach = firstReach(around: centre, in: cellSets, wanting: 1, withinOneCell: true)
        while true {
            let hits = collect(cellSets, around: centre, within: reach, after: nil, where: nil)
            if !hits.isEmpty { return ranked(hits, limit: 1) { ($0, $1) }.first }
            // Half the circumference reaches the antipode: beyond it there is nothing left to find.
            if reach >= Double.pi * Earth.meanRadius.meters { return nil }
            reach = min(reach * 2, Double.pi * Earth.meanRadius.meters)
        }
    }

    /// One cell's height, about 434 m: the first search circle where the centre's cell is empty.
    static var cellHeightMeters: Double { Earth.meanRadius.meters * (Double.pi / 180) / cellsPerDegree }

    /// The first search circle: where the centre's cell holds things, the circle that would hold about twice
    /// `wanted` of them at that cell's density, so that dense data is read in a small band and sparse data
    /// needs few widenings; at least a metre, and at most one cell's height `withinOneCell` (a first page,
    /// whose circle is read whole). A later page reads a ring of this circle's area beyond its cursor, which
    /// is narrow however wide the circle: there the estimate is taken as it is.
    private func firstReach(
        around centre: Coordinate, in cellSets: [Cells], wanting wanted: Int, withinOneCell: Bool
    ) -> Double {
        let cell = Self.cell(of: centre)
        let count = cellSets.reduce(0) { $0 + ($1[cell]?.count ?? 0) }
        guard count > 0 else { return Self.cellHeightMeters }
        let area = Self.cellHeightMeters * Self.cellHeightMeters * max(0.01, cos(centre.latitude * .pi / 180))
        let reach = max(1, (2 * Double(wanted) * area / (Double.pi * Double(count))).squareRoot())
        return withinOneCell ? min(Self.cellHeightMeters, reach) : reach
    }

    private func cells(for wanted: Set<Group>) -> [Cells] {
        wanted.isEmpty ? (everything.isEmpty ? [] : [everything]) : wanted.compactMap { groups[$0] }
    }

    /// Every thing within `reach` metres that ranks after `after`, with its distance, in no order.
    private func collect(
        _ cellSets: [Cells], around centre: Coordinate, within reach: Double, after: (distance: Distance, id: Item.ID)?,
        where included: ((Item) -> Bool)?
    ) -> [(item: Int32, distance: Distance)] {
        let box = BoundingBox(around: centre, radius: Distance(meters: reach))
        // The band of z that the box's latitudes span, widened by far more than Float rounding moves a point;
        // the exact latitude test follows.
        let zLow = Float(sin(max(-90, box.minLatitude) * .pi / 180) - 1e-6)
        let zHigh = Float(sin(min(90, box.maxLatitude) * .pi / 180) + 1e-6)
        let longitudeRanges = box.longitudeRanges
        let wholeCircle = longitudeRanges.count == 1 && longitudeRanges[0] == -180...180
        let measure = HaversineCentre(centre)
        var hits: [(item: Int32, distance: Distance)] = []
        func visit(_ members: [Member]) {
            var position = Self.firstIndex(in: members, notBelow: zLow)
            while position < members.count, members[position].z <= zHigh {
                let member = members[position]
                position += 1
                let latitude = member.coordinate.latitude, longitude = member.coordinate.longitude
                guard latitude >= box.minLatitude, latitude <= box.maxLatitude,
                    wholeCircle || longitudeRanges.contains(where: { $0.contains(longitude) })
                else { continue }
                let distance = measure.distance(to: member.coordinate)
                guard distance.meters <= reach else { continue }
                if let after, !Ranking.ranks(distance, items[Int(member.slot)]!.id, after: after) { continue }
                if let included, let item = items[Int(member.slot)], !included(item) { continue }
                hits.append((member.slot, distance))
            }
        }
        let rowRange = Self.row(of: box.minLatitude)...Self.row(of: box.maxLatitude)
        let columnRanges = box.longitudeRanges.map { Self.column(of: $0.lowerBound)...Self.column(of: $0.upperBound) }
        let boxCells = Int64(rowRange.count) * columnRanges.reduce(0) { $0 + Int64($1.count) }
        // A cell whose every point is nearer than the cursor holds nothing after it. A millimetre of slack keeps a
        // cell whose far corner rounds to just under the cursor's distance.
        let nearer = after.map { $0.distance.meters - 0.001 }
        func skipped(_ cell: Int64) -> Bool {
            guard let nearer, nearer > 0 else { return false }
            return Self.farthestCorner(of: cell, from: centre) < nearer
        }
        for cells in cellSets {
            if boxCells > Int64(cells.count) {
                // Fewer cells are occupied than the box covers (a wide circle, or sparse data): walk those.
                for (cell, members) in cells
                where rowRange.contains(cell >> 20) && columnRanges.contains(where: { $0.contains(cell & 0xFFFFF) }) {
                    if !skipped(cell) { visit(members) }
                }
            } else {
                for row in rowRange {
                    for columns in columnRanges {
                        for column in columns {
                            let cell = row << 20 | column
                            if let members = cells[cell], !skipped(cell) { visit(members) }
                        }
                    }
                }
            }
        }
        return hits
    }

    /// The distance from `centre` to the farthest point of the cell. On the sphere that is one of the corners:
    /// along a meridian the distance has one minimum and no maximum inside a segment, and along a parallel it
    /// grows with the difference of longitude (a cell spans 1/256 of a degree, far less than 180).
    static func farthestCorner(of cell: Int64, from centre: Coordinate) -> Double {
        let south = Double(cell >> 20) / cellsPerDegree - 90, west = Double(cell & 0xFFFFF) / cellsPerDegree - 180
        let north = min(90, south + 1 / cellsPerDegree), east = min(180, west + 1 / cellsPerDegree)
        var farthest = 0.0
        for latitude in [south, north] {
            for longitude in [west, east] {
                // Every corner lies in range; one that did not would make the cell count as far (never skipped).
                guard let corner = try? Coordinate(latitude: latitude, longitude: longitude) else { return .infinity }
                farthest = max(farthest, haversineDistance(from: centre, to: corner).meters)
            }
        }
        return farthest
    }

    /// The first `limit` hits by the one ranking every store applies (`Ranking.best`).
    private func ranked<Answer>(
        _ hits: [(item: Int32, distance: Distance)], limit: Int, as answer: (Item, Distance) -> Answer
    ) -> [Answer] {
        Ranking.best(hits, limit: limit, id: { items[Int($0)]!.id }).map { answer(items[Int($0.item)]!, $0.distance) }
    }

    /// Cells keep their members in order of `z` (the sine of latitude), so that a search reads only the band of
    /// a cell its circle can reach: a 50 m circle in a cell of 434 m reads an eighth of it.
    private static func insertMember(_ member: Member, at cell: Int64, into cells: inout Cells) {
        var members = cells.removeValue(forKey: cell) ?? []
        members.insert(member, at: firstIndex(in: members, notBelow: member.z))
        cells[cell] = members
    }

    private static func removeMember(_ member: Member, at cell: Int64, from cells: inout Cells) {
        guard var members = cells.removeValue(forKey: cell) else { return }
        var position = firstIndex(in: members, notBelow: member.z)
        while position < members.count, members[position].z == member.z, members[position].slot != member.slot { position += 1 }
        if position == members.count || members[position].slot != member.slot {
            // A cell filled by `insert(contentsOf:)` is not in order until that call ends.
            position = members.firstIndex { $0.slot == member.slot } ?? members.count
        }
        if position < members.count { members.remove(at: position) }
        if !members.isEmpty { cells[cell] = members }
    }

    /// The first position whose member's `z` is not below `z`, by binary search.
    static func firstIndex(in members: [Member], notBelow z: Float) -> Int {
        var low = 0, high = members.count
        while low < high {
            let middle = (low + high) / 2
            if members[middle].z < z { low = middle + 1 } else { high = middle }
        }
        return low
    }

    static func row(of latitude: Double) -> Int64 {
        min(rows - 1, max(0, Int64(((latitude + 90) * cellsPerDegree).rounded(.down))))
    }

    static func column(of longitude: Double) -> Int64 {
        min(columns - 1, max(0, Int64(((longitude + 180) * cellsPerDegree).rounded(.down))))
    }

    static func cell(of coordinate: Coordinate) -> Int64 {
        row(of: coordinate.latitude) << 20 | column(of: coordinate.longitude)
    }

    static func member(slot: Int32, at coordinate: Coordinate) -> Member {
        Member(coordinate: coordinate, slot: slot, z: Float(sin(coordinate.latitude * .pi / 180)))
    }
}
