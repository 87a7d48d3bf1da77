/// A polygon on the globe: one outer ring and any number of holes, each ring closed (first == last).
///
/// Containment treats longitude and latitude as plane coordinates, which is what RFC 7946 prescribes for
/// GeoJSON edges and is exact enough for campus- and building-sized shapes that do not cross ±180°.
public struct Polygon: Hashable, Sendable {
    public let exterior: [Coordinate]
    public let holes: [[Coordinate]]

    /// Builds a polygon, refusing rings with fewer than four positions or not closed.
    public init(exterior: [Coordinate], holes: [[Coordinate]] = []) throws(PolygonError) {
        try Self.validate(ring: exterior, index: 0)
        for (offset, hole) in holes.enumerated() { try Self.validate(ring: hole, index: offset + 1) }
        self.exterior = exterior
        self.holes = holes
    }

    /// All rings, exterior first, as GeoJSON orders them.
    public var rings: [[Coordinate]] { [exterior] + holes }

    private static func validate(ring: [Coordinate], index: Int) throws(PolygonError) {
        guard ring.count >= 4 else { throw .tooFewPositions(ring: index, count: ring.count) }
        guard ring.first == ring.last else { throw .ringNotClosed(ring: index) }
    }

    /// True when the point is inside the exterior and outside every hole. Points on an edge count as inside
    /// the ring they touch for the exterior and as outside for a hole's interior, a fixed rule so that
    /// answers are reproducible.
    public func contains(_ point: Coordinate) -> Bool {
        guard Self.ring(exterior, contains: point) else { return false }
        return !holes.contains { Self.ring($0, strictlyContains: point) }
    }

    private static func ring(_ ring: [Coordinate], contains point: Coordinate) -> Bool {
        onBoundary(ring, point) || crossingParity(ring, point)
    }

    private static func ring(_ ring: [Coordinate], strictlyContains point: Coordinate) -> Bool {
        !onBoundary(ring, point) && crossingParity(ring, point)
    }

    /// Even-odd rule: cast a ray towards +longitude and count edge crossings.
    private static func crossingParity(_ ring: [Coordinate], _ point: Coordinate) -> Bool {
        var inside = false
        for index in 0..<(ring.count - 1) {
            let a = ring[index], b = ring[index + 1]
            if (a.latitude > point.latitude) != (b.latitude > point.latitude) {
                let t = (point.latitude - a.latitude) / (b.latitude - a.latitude)
                let crossingLongitude = a.longitude + t * (b.longitude - a.longitude)
                if point.longitude < crossingLongitude { inside.toggle() }
            }
        }
        return inside
    }

    private static func onBoundary(_ ring: [Coordinate], _ point: Coordinate) -> Bool {
        for index in 0..<(ring.count - 1) {
            let a = ring[index], b = ring[index + 1]
            let cross = (b.longitude - a.longitude) * (point.latitude - a.latitude)
                - (b.latitude - a.latitude) * (point.longitude - a.longitude)
            guard abs(cross) <= 1e-15 else { continue }
            if point.longitude >= min(a.longitude, b.longitude), point.longitude <= max(a.longitude, b.longitude),
                point.latitude >= min(a.latitude, b.latitude), point.latitude <= max(a.latitude, b.latitude)
            {
                return true
            }
        }
        return false
    }

    /// Signed planar area and centroid of a ring (shoelace formula), in degree units.
    private static func areaAndCentroid(_ ring: [Coordinate]) -> (area: Double, longitude: Double, latitude: Double) {
        var twiceArea = 0.0, cx = 0.0, cy = 0.0
        let originLon = ring[0].longitude, originLat = ring[0].latitude
        for index in 0..<(ring.count - 1) {
            let x0 = ring[index].longitude - originLon, y0 = ring[index].latitude - originLat
            let x1 = ring[index + 1].longitude - originLon, y1 = ring[index + 1].latitude - originLat
            let cross = x0 * y1 - x1 * y0
            twiceArea += cross
            cx += (x0 + x1) * cross
            cy += (y0 + y1) * cross
        }
        guard twiceArea != 0 else { return (0, originLon, originLat) }
        return (twiceArea / 2, originLon + cx / (3 * twiceArea), originLat + cy / (3 * twiceArea))
    }

    /// Planar area in square degrees, holes subtracted; used to pick the largest part of a MultiPolygon.
    public var planarArea: Double {
        abs(Self.areaAndCentroid(exterior).area) - holes.reduce(0) { $0 + abs(Self.areaAndCentroid($1).area) }
    }

    /// A point guaranteed to lie inside the polygon: the centroid when it is inside (the usual case for
    /// buildings), otherwise the middle of the widest inside stretch of a horizontal line through the
    /// centroid's latitude (or through the middle of the exterior's latitude span).
    public var representativePoint: Coordinate {
        let centroid = Self.areaAndCentroid(exterior)
        if let candidate = try? Coordinate(latitude: centroid.latitude, longitude: centroid.longitude),
            contains(candidate)
        {
            return candidate
        }
        let latitudes = exterior.map(\.latitude)
        let midLatitude = ((latitudes.min() ?? 0) + (latitudes.max() ?? 0)) / 2
        for scanLatitude in [centroid.latitude, midLatitude] {
            if let point = widestInsideStretch(atLatitude: scanLatitude) { return point }
        }
        return exterior[0]
    }

    private func widestInsideStretch(atLatitude latitude: Double) -> Coordinate? {
        var crossings: [Double] = []
        for ring in rings {
            for index in 0..<(ring.count - 1) {
                let a = ring[index], b = ring[index + 1]
                if (a.latitude > latitude) != (b.latitude > latitude) {
                    let t = (latitude - a.latitude) / (b.latitude - a.latitude)
                    crossings.append(a.longitude + t * (b.longitude - a.longitude))
                }
            }
        }
        crossings.sort()
        var best: (width: Double, middle: Double)?
        var index = 0
        while index + 1 < crossings.count {
            let width = crossings[index + 1] - crossings[index]
            if width > 0, width > (best?.width ?? 0) { best = (width, (crossings[index] + crossings[index + 1]) / 2) }
            index += 2
        }
        guard let best, let point = try? Coordinate(latitude: latitude, longitude: best.middle), contains(point)
        else { return nil }
        return point
    }
}

/// One or more polygons treated as one area (a campus split by a road, a building with wings).
public struct MultiPolygon: Hashable, Sendable {
    public let polygons: [Polygon]

    public init(_ polygons: [Polygon]) throws(PolygonError) {
        guard !polygons.isEmpty else { throw .empty }
        self.polygons = polygons
    }

    public init(_ polygon: Polygon) { self.polygons = [polygon] }

    public func contains(_ point: Coordinate) -> Bool { polygons.contains { $0.contains(point) } }

    /// A point inside the largest part.
    public var representativePoint: Coordinate {
        polygons.max { $0.planarArea < $1.planarArea }!.representativePoint
    }
}

public enum PolygonError: Error, Hashable, Sendable, CustomStringConvertible {
    case tooFewPositions(ring: Int, count: Int)
    case ringNotClosed(ring: Int)
    case empty

    public var description: String {
        switch self {
        case .tooFewPositions(let ring, let count):
            "ring \(ring) has \(count) positions; a linear ring needs at least 4"
        case .ringNotClosed(let ring): "ring \(ring) is not closed: its first and last positions differ"
        case .empty: "a MultiPolygon needs at least one polygon"
        }
    }
}
