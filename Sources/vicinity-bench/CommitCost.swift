import Foundation
import GeoTestSupport
import Logging
import VicinityCore
import VicinitySpatiaLite

/// `vicinity-bench writes [COUNT]`: the cost of one committed write with each `synchronous` setting: COUNT
/// single-place upserts, each its own transaction, into a new database in the temporary folder.
enum CommitCost {
    static func run(count: Int) async throws {
        print("commit cost: \(count) single-place upserts, each its own transaction, database in \(FileManager.default.temporaryDirectory.path)")
        for synchronous in [StorageSettings.Synchronous.full, .normal] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-writes-\(UUID().uuidString).sqlite").path
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let store = try SpatiaLiteStore(path: path, logger: Logger(label: "bench"), settings: try StorageSettings(synchronous: synchronous))
            var generator = SeededGenerator(seed: 7)
            var samples: [Double] = []
            let clock = ContinuousClock()
            for index in 0..<count {
                let place = try Place(
                    id: PlaceID("w\(index)"), name: "Write \(index)", category: "bench",
                    coordinate: ScaleCurve.point(generator: &generator, within: ScaleCurve.halfSide))
                let start = clock.now
                _ = try await store.upsert([place])
                samples.append(seconds(clock.now - start))
            }
            try store.close()
            samples.sort()
            print(String(format: "synchronous %@: median %.3f ms, p99 %.3f ms per committed write",
                         synchronous.rawValue, percentile(samples, 0.5) * 1000, percentile(samples, 0.99) * 1000))
        }
    }
}
