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
/// category), so that a search for a rare group walks only that group's cells. Cells keep the point as a unit
/// vector in `Float`: the chord to the centre filters candidates in a few multiplications, and only those that
/// pass are measured by haversine, on the exact `Double` coordinate. Answers are ranked as `Ranking` ranks: by
/// distance, then id.
///
/// A value type without locking; `SharedIndex` makes one safe to read from many threads.
public struct PointGrid<Item: Located, Group: Hashable & Sendable>: Sendable {
    /// One thing in a cell: its slot and where it is, as a unit vector.
    struct Member: Sendable {
        var slot: Int32
        var x: Float
        var y: Float
        var z: Float
    }

    typealias Cells = [Int64: [Member]]

    /// 1/256 of a degree: about 434 m of latitude. A 1000 m query (the service's standard radius) then reads
    /// 5 × 5 to 6 × 6 cells at mid latitudes, and a cell of a dense city (1M points in 50 × 50 km) holds about
    /// 75 points, so the 20 nearest are usually found in the first ring of cells.
    static var cellsPerDegree: Double { 256 }
    static var rows: Int64 { 180 * 256 }
    static var columns: Int64 { 360 * 256 }

    private let groupOf: @Sendable (Item) -> Group
    private var items: [Item?] = []
    private var coordinates: [Coordinate] = []
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
        coordinates.reserveCapacity(capacity)
        slots.reserveCapacity(capacity)
    }

    /// Adds the thing, or replaces the one with its id.
    public mutating func insert(_ item: Item) {
        remove(item.id)
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            items[Int(slot)] = item
            coordinates[Int(slot)] = item.coordinate
        } else {
            slot = Int32(items.count)
            items.append(item)
            coordinates.append(item.coordinate)
        }
        slots[item.id] = slot
        let group = groupOf(item)
        let cell = Self.cell(of: item.coordinate)
        let member = Self.member(slot: slot, at: item.coordinate)
        everything[cell, default: []].append(member)
        groups[group, default: [:]][cell, default: []].append(member)
        groupCounts[group, default: 0] += 1
    }

    /// Removes the thing with this id, if the grid holds it.
    public mutating func remove(_ id: Item.ID) {
        guard let slot = slots.removeValue(forKey: id), let item = items[Int(slot)] else { return }
        let group = groupOf(item)
        let cell = Self.cell(of: item.coordinate)
        Self.removeMember(slot, at: cell, from: &everything)
        Self.removeMember(slot, at: cell, from: &groups[group, default: [:]])
        if groups[group]?.isEmpty == true { groups[group] = nil }
        groupCounts[group, default: 0] -= 1
        if groupCounts[group] == 0 { groupCounts[group] = nil }
        items[Int(slot)] = nil
        freeSlots.append(slot)
    }

    /// The things of the groups (all when `groups` is empty) within `radius` of `centre` that rank after
    /// `after`, nearest first, at most `limit`.
    ///
    /// The search starts in a small circle and doubles it until the circle holds `limit` answers or reaches
    /// `radius`: a circle of radius r holds every thing within r, so its `limit` nearest are the answer once
    /// it has that many. Few answers near the centre therefore cost a few cells, not the whole radius.
    public func nearest(
        to centre: Coordinate, within radius: Distance, groups wanted: Set<Group> = [],
        after: (distance: Distance, id: Item.ID)? = nil, limit: Int
    ) -> [(item: Item, distance: Distance)] {
        guard limit > 0, radius.meters >= 0 else { return [] }
        let cellSets = cells(for: wanted)
        guard !cellSets.isEmpty else { return [] }
        let floor = after?.distance.meters ?? 0
        var reach = min(radius.meters, floor + Self.firstStepMeters)
        while true {
            let hits = collect(cellSets, around: centre, within: reach, after: after)
            if hits.count >= limit || reach >= radius.meters {
                return ranked(hits, limit: limit)
            }
            reach = min(radius.meters, floor + (reach - floor) * 2)
        }
    }

    /// The nearest thing of the groups (any when `groups` is empty), however far; nil only when there is none.
    public func closest(to centre: Coordinate, groups wanted: Set<Group> = []) -> (item: Item, distance: Distance)? {
        let cellSets = cells(for: wanted)
        guard !cellSets.isEmpty else { return nil }
        var reach = Self.firstStepMeters
        while true {
            let hits = collect(cellSets, around: centre, within: reach, after: nil)
            if !hits.isEmpty { return ranked(hits, limit: 1).first }
            // Half the circumference reaches the antipode: beyond it there is nothing left to find.
            if reach >= Double.pi * Earth.meanRadius.meters { return nil }
            reach = min(reach * 2, Double.pi * Earth.meanRadius.meters)
        }
    }

    /// The first search circle: one cell's height, about 434 m.
    static var firstStepMeters: Double { Earth.meanRadius.meters * (Double.pi / 180) / cellsPerDegree }

    private func cells(for wanted: Set<Group>) -> [Cells] {
        wanted.isEmpty ? (everything.isEmpty ? [] : [everything]) : wanted.compactMap { groups[$0] }
    }

    /// Every thing within `reach` metres that ranks after `after`, with its distance, in no order.
    private func collect(
        _ cellSets: [Cells], around centre: Coordinate, within reach: Double, after: (distance: Distance, id: Item.ID)?
    ) -> [(slot: Int32, distance: Double)] {
        let box = BoundingBox(around: centre, radius: Distance(meters: reach))
        let (cx, cy, cz) = Self.unitVector(centre)
        // The chord of the reach, widened by far more than Float storage can move a point (about 1e-7 of the
        // radius, under a metre), so no true hit is lost; haversine then decides.
        let angle = min(Double.pi, reach / Earth.meanRadius.meters)
        let chordLimit = 2 * sin(angle / 2) + 1e-6
        let chordLimitSquared = chordLimit * chordLimit
        var hits: [(slot: Int32, distance: Double)] = []
        func visit(_ members: [Member]) {
            for member in members {
                let dx = Double(member.x) - cx, dy = Double(member.y) - cy, dz = Double(member.z) - cz
                guard dx * dx + dy * dy + dz * dz <= chordLimitSquared else { continue }
                let distance = haversineDistance(from: centre, to: coordinates[Int(member.slot)]).meters
                guard distance <= reach else { continue }
                if let after {
                    guard distance > after.distance.meters
                        || (distance == after.distance.meters && items[Int(member.slot)]!.id > after.id)
                    else { continue }
                }
                hits.append((member.slot, distance))
            }
        }
        let rowRange = Self.row(of: box.minLatitude)...Self.row(of: box.maxLatitude)
        let columnRanges = box.longitudeRanges.map { Self.column(of: $0.lowerBound)...Self.column(of: $0.upperBound) }
        let boxCells = Int64(rowRange.count) * columnRanges.reduce(0) { $0 + Int64($1.count) }
        for cells in cellSets {
            if boxCells > Int64(cells.count) {
                // Fewer cells are occupied than the box covers (a wide circle, or sparse data): walk those.
                for (cell, members) in cells
                where rowRange.contains(cell >> 20) && columnRanges.contains(where: { $0.contains(cell & 0xFFFFF) }) {
                    visit(members)
                }
            } else {
                for row in rowRange {
                    for columns in columnRanges {
                        for column in columns {
                            if let members = cells[row << 20 | column] { visit(members) }
                        }
                    }
                }
            }
        }
        return hits
    }

    private func ranked(_ hits: [(slot: Int32, distance: Double)], limit: Int) -> [(item: Item, distance: Distance)] {
        let precedes = { (a: (slot: Int32, distance: Double), b: (slot: Int32, distance: Double)) -> Bool in
            a.distance != b.distance ? a.distance < b.distance : items[Int(a.slot)]!.id < items[Int(b.slot)]!.id
        }
        let chosen = limit == 1 ? (hits.min(by: precedes).map { [$0] } ?? []) : Array(hits.sorted(by: precedes).prefix(limit))
        return chosen.map { (items[Int($0.slot)]!, Distance(meters: $0.distance)) }
    }

    private static func removeMember(_ slot: Int32, at cell: Int64, from cells: inout Cells) {
        guard var members = cells[cell], let position = members.firstIndex(where: { $0.slot == slot }) else { return }
        members.swapAt(position, members.count - 1)
        members.removeLast()
        cells[cell] = members.isEmpty ? nil : members
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

    static func unitVector(_ coordinate: Coordinate) -> (Double, Double, Double) {
        let latitude = coordinate.latitude * .pi / 180, longitude = coordinate.longitude * .pi / 180
        return (cos(latitude) * cos(longitude), cos(latitude) * sin(longitude), sin(latitude))
    }

    static func member(slot: Int32, at coordinate: Coordinate) -> Member {
        let (x, y, z) = unitVector(coordinate)
        return Member(slot: slot, x: Float(x), y: Float(y), z: Float(z))
    }
}
