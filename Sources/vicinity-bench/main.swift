import Foundation
import GeoCore
import GeoTestSupport
import Logging
import VicinityCore
import VicinityImport
import VicinitySpatiaLite

/// Prints import and query figures for a places CSV (the GeoNames cities1000 extract, for instance):
///   vicinity-bench FILE.csv [QUERIES]
///   vicinity-bench scale [LARGEST [QUERIES]]   (the hot index from 10k points up to LARGEST; see Scale.swift)
///   vicinity-bench writes [COUNT]               (the cost of one committed write, synchronous FULL and NORMAL)
/// Build in release; Scripts/bench/places.sh does both.

func seconds(_ duration: Duration) -> Double {
    duration.milliseconds / 1000
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

func report(_ name: String, _ samples: [Double]) {
    let sorted = samples.sorted()
    let format = { (value: Double) in String(format: "%.1f µs", value * 1e6) }
    print("\(name): median \(format(percentile(sorted, 0.5))), p99 \(format(percentile(sorted, 0.99))), max \(format(sorted.last ?? 0)) over \(sorted.count) queries")
}

func peakResidentMemory() -> String {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return "unknown" }
    return line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces)
}

let arguments = CommandLine.arguments
if arguments.count >= 2, arguments[1] == "scale" {
    print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB")
    try await ScaleCurve.run(
        largest: arguments.count > 2 ? Int(arguments[2]) ?? 1_000_000 : 1_000_000,
        queries: arguments.count > 3 ? Int(arguments[3]) ?? 2000 : 2000)
    exit(0)
}
if arguments.count >= 2, arguments[1] == "writes" {
    try await CommitCost.run(count: arguments.count > 2 ? Int(arguments[2]) ?? 2000 : 2000)
    exit(0)
}
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: vicinity-bench FILE.csv [QUERIES]\n".utf8))
    exit(64)
}
let file = arguments[1]
let queryCount = arguments.count > 2 ? Int(arguments[2]) ?? 2000 : 2000
let clock = ContinuousClock()
let databasePath = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-bench-\(UUID().uuidString).sqlite").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: databasePath + suffix) } }

print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB; SpatiaLite database in \(FileManager.default.temporaryDirectory.path)")

let parseStart = clock.now
let parsed = try PlaceFileReader.read(path: file)
let parseTime = clock.now - parseStart
let store = try SpatiaLiteStore(path: databasePath, logger: Logger(label: "bench"))
print("SpatiaLite \(store.spatiaLiteVersion)")
let upsertStart = clock.now
let summary = try await store.upsert(parsed.places)
let upsertTime = clock.now - upsertStart
let size = (try FileManager.default.attributesOfItem(atPath: databasePath)[.size] as? NSNumber)?.intValue ?? 0
let walSize = (try? FileManager.default.attributesOfItem(atPath: databasePath + "-wal")[.size] as? NSNumber)?.intValue ?? 0
print(String(format: "import: %d places in %.2f s (read and validate %.2f s, write and index %.2f s); database %.1f MiB (+ WAL %.1f MiB)",
             summary.inserted, seconds(parseTime + upsertTime), seconds(parseTime), seconds(upsertTime),
             Double(size) / 1_048_576, Double(walSize) / 1_048_576))
let reimportStart = clock.now
let again = try await store.upsert(parsed.places)
print(String(format: "re-import: %d unchanged in %.2f s", again.unchanged, seconds(clock.now - reimportStart)))

/// Query centres: random places moved up to 2 km in a random direction, where users of a proximity
/// service are, plus uniform random points on the sphere (mostly ocean: the worst case for closest()).
var generator = SeededGenerator(seed: 2026)
var centres: [Coordinate] = []
for index in 0..<queryCount {
    if index % 10 == 9 {
        let z = Double.random(in: -1...1, using: &generator)
        centres.append(try Coordinate(latitude: asin(z) * 180 / .pi, longitude: Double.random(in: -180...180, using: &generator)))
    } else {
        let place = parsed.places[Int.random(in: 0..<parsed.places.count, using: &generator)]
        let distance = Double.random(in: 0...2000, using: &generator) / Earth.meanRadius.meters
        let bearing = Double.random(in: 0..<(2 * .pi), using: &generator)
        let phi1 = place.coordinate.latitude * .pi / 180, lambda1 = place.coordinate.longitude * .pi / 180
        let phi2 = asin(sin(phi1) * cos(distance) + cos(phi1) * sin(distance) * cos(bearing))
        var lambda2 = (lambda1 + atan2(sin(bearing) * sin(distance) * cos(phi1), cos(distance) - sin(phi1) * sin(phi2))) * 180 / .pi
        if lambda2 > 180 { lambda2 -= 360 } else if lambda2 < -180 { lambda2 += 360 }
        centres.append(try Coordinate(latitude: min(90, max(-90, phi2 * 180 / .pi)), longitude: lambda2))
    }
}

var closestSamples: [Double] = []
var nearbySamples: [Double] = []
var found = 0
for centre in centres {
    let start = clock.now
    _ = try await store.closest(to: centre, categories: [])
    closestSamples.append(seconds(clock.now - start))
}
for centre in centres {
    let start = clock.now
    found += try await store.nearby(NearbyQuery(centre: centre, radius: .standard, limit: .standard)).count
    nearbySamples.append(seconds(clock.now - start))
}
report("closest (SpatiaLite)", closestSamples)
report("nearby 1000 m limit 20 (SpatiaLite)", nearbySamples)
print(String(format: "nearby found %.2f places per query on average", Double(found) / Double(centres.count)))

/// Name search: a piece of a random place's name (3 to 8 characters from a random start, fewer for shorter
/// names; spaces at its ends fold away), as people type.
var searchSamples: [Double] = []
for _ in 0..<200 {
    let name = Array(parsed.places[Int.random(in: 0..<parsed.places.count, using: &generator)].name)
    let length = min(name.count, Int.random(in: 3...8, using: &generator))
    let start = Int.random(in: 0...(name.count - length), using: &generator)
    let started = clock.now
    _ = try await store.search(PlaceSearch(text: String(name[start..<(start + length)])))
    searchSamples.append(seconds(clock.now - started))
}
report("search by a piece of a name (SpatiaLite)", searchSamples)

let memory = InMemoryStore()
_ = try await memory.upsert(parsed.places)
var bruteSamples: [Double] = []
for centre in centres.prefix(200) {
    let start = clock.now
    _ = try await memory.closest(to: centre, categories: [])
    bruteSamples.append(seconds(clock.now - start))
}
report("closest (in-memory brute force, for reference)", bruteSamples)
print("peak resident memory: \(peakResidentMemory())")
