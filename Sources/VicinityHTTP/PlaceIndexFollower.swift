import Logging
import ServiceLifecycle
import VicinityCore

/// Keeps the server's in-memory places in step with writes made by other processes (`vicinity import` while
/// the server runs): every `interval` it compares the store's revision with the one held, and reloads when
/// they differ. The check reads one row; a reload happens only after a write the server did not make.
public struct PlaceIndexFollower<Record: PlaceStore>: Service {
    let places: IndexedPlaces<Record>
    let interval: Duration
    let logger: Logger

    /// One second: an import shows within about a second plus its reload time, and the check costs one
    /// single-row read a second.
    public static var standardInterval: Duration { .seconds(1) }

    public init(places: IndexedPlaces<Record>, interval: Duration = standardInterval, logger: Logger) {
        self.places = places
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                do {
                    let clock = ContinuousClock()
                    let start = clock.now
                    if try await places.refreshIfStale() {
                        let count = try await places.count()
                        logger.info("reloaded places written by another process", metadata: [
                            "places": "\(count)", "seconds": "\((clock.now - start).seconds)",
                        ])
                    }
                } catch {
                    logger.error("could not check the place store for changes", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}

extension Duration {
    /// The duration in seconds, as a number for logs.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
