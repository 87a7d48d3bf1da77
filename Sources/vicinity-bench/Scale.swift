import Foundation
import GeoCore
import GeoTestSupport
import VicinityCore

/// `vicinity-bench scale [LARGEST]`: the hot place index at 10k, 100k, 1M (and 10M) points, uniform in a 50 × 50 km
/// square centred on CSULB's Hall of Science (as in Data/csulb-buildings.csv), with a fixed seed: cost per query
/// of W1 (closest), W2 (20 nearest within 1000 m), W3 (every place within 1000 m, all pages of 500) and W4 (every
/// place within 100 m), and resident memory per indexed point.
enum ScaleCurve {
    static let centre = (latitude: 33.779842, longitude: -118.112526)
    /// Half the side of the square, in metres.
    static let halfSide = 25_000.0

    static func run(largest: Int, queries: Int) async throws {
        let sizes = [10_000, 100_000, 1_000_000, 10_000_000].filter { $0 <= largest }
        print("scale curve: uniform points in a 50 × 50 km square; \(queries) random centres in its middle 40 × 40 km per workload")
        print("| points | load into the index | memory per point | W1 closest | W2 20 within 1000 m | W3 all within 1000 m (hits) | W4 all within 100 m (hits) |")
        print("|---|---|---|---|---|---|---|")
        var first: [Double] = []
        var last: [Double] = []
        for size in sizes {
            let (row, medians) = try await measure(size: size, queries: queries)
            print(row)
            if first.isEmpty { first = medians }
            last = medians
        }
        if sizes.count > 1 {
            let growth = zip(first, last).map { String(format: "%.2f×", $1 / $0) }
            print("median cost growth from \(sizes.first!) to \(sizes.last!) points: W1 \(growth[0]), W2 \(growth[1]), W3 \(growth[2]), W4 \(growth[3])")
        }
    }

    static func measure(size: Int, queries: Int) async throws -> (String, [Double]) {
        let clock = ContinuousClock()
        var generator = SeededGenerator(seed: UInt64(size))
        let categories: [VicinityCore.Category] = ["academic", "buddhist_temple", "cafe", "library", "shop", "residential"]
        var places: [Place] = []
        places.reserveCapacity(size)
        for index in 0..<size {
            let coordinate = try point(generator: &generator, within: halfSide)
            places.append(try Place(
                id: PlaceID("p\(index)"), name: "Place \(index)", category: categories[index % categories.count],
                coordinate: coordinate))
        }
        let record = InMemoryStore()
        _ = try await record.upsert(places)
        places = []
        // The index shares the record's strings (short ones are inline anyway); what it adds is its own.
        let before = residentBytes()
        let buildStart = clock.now
        let index = try await IndexedPlaces(record: record)
        let buildTime = clock.now - buildStart
        let perPoint = Double(residentBytes() - before) / Double(size)

        var centres: [Coordinate] = []
        for _ in 0..<queries { centres.append(try point(generator: &generator, within: halfSide - 5_000)) }
        let w1 = try await time(centres) { centre in try await index.closest(to: centre, categories: []) == nil ? 0 : 1 }
        let w2 = try await time(centres) { centre in try await index.nearbyPage(NearbyQuery(centre: centre)).hits.count }
        let w3 = try await time(centres) { centre in
            var query = NearbyQuery(centre: centre, limit: try ResultLimit(ResultLimit.maximum))
            var total = 0
            while true {
                let page = try await index.nearbyPage(query)
                total += page.hits.count
                guard let next = page.next else { return total }
                query.after = next
            }
        }
        let w4 = try await time(centres) { centre in
            try await index.nearbyPage(NearbyQuery(
                centre: centre, radius: SearchRadius(meters: 100), limit: ResultLimit(ResultLimit.maximum))).hits.count
        }
        let row = String(
            format: "| %@ | %.2f s | %.0f B | %@ | %@ | %@ (%.0f) | %@ (%.1f) |",
            size.formatted(), seconds(buildTime), perPoint, w1.text, w2.text, w3.text, w3.hits, w4.text, w4.hits)
        return (row, [w1.median, w2.median, w3.median, w4.median])
    }

    struct Timing {
        var median: Double
        var p99: Double
        var hits: Double
        var text: String { String(format: "%.1f µs (p99 %.1f)", median * 1e6, p99 * 1e6) }
    }

    static func time(_ centres: [Coordinate], _ query: (Coordinate) async throws -> Int) async throws -> Timing {
        let clock = ContinuousClock()
        var samples: [Double] = []
        var hits = 0
        for centre in centres {
            let start = clock.now
            hits += try await query(centre)
            samples.append(seconds(clock.now - start))
        }
        samples.sort()
        return Timing(median: percentile(samples, 0.5), p99: percentile(samples, 0.99), hits: Double(hits) / Double(centres.count))
    }

    /// A uniform point in the square of half side `half` metres around the centre (uniform in degrees, which
    /// over 50 km is uniform in area to 0.3%).
    static func point(generator: inout SeededGenerator, within half: Double) throws -> Coordinate {
        let metresPerDegree = Earth.meanRadius.meters * .pi / 180
        let latitudeSpan = half / metresPerDegree
        let longitudeSpan = half / (metresPerDegree * cos(centre.latitude * .pi / 180))
        return try Coordinate(
            latitude: centre.latitude + Double.random(in: -latitudeSpan...latitudeSpan, using: &generator),
            longitude: centre.longitude + Double.random(in: -longitudeSpan...longitudeSpan, using: &generator))
    }

    /// The process's resident set now, from /proc (Linux).
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.dropFirst("VmRSS:".count).trimmingCharacters(in: .whitespaces).dropLast(3))
        else { return 0 }
        return kilobytes * 1024
    }
}
