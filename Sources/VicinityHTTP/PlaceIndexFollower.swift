import Logging
import ServiceLifecycle
import VicinityCore

/// Keeps the server's in-memory places and campuses in step with writes made by other processes (`vicinity
/// import` while the server runs): every `interval` it compares the store's revisions with those held, and
/// reloads what differs. The check reads one row; a reload happens only after a write the server did not make.
public struct PlaceIndexFollower<Record: Stores>: Service {
    let stores: IndexedStores<Record>
    let interval: Duration
    let logger: Logger

    /// One second: an import shows within about a second plus its reload time, and the check costs one
    /// single-row read a second.
    public static var standardInterval: Duration { .seconds(1) }

    public init(stores: IndexedStores<Record>, interval: Duration = standardInterval, logger: Logger) {
        self.stores = stores
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
                    let reloaded = try await stores.refreshIfStale()
                    if reloaded.places || reloaded.campuses {
                        let places = try await stores.places.count(), campuses = try await stores.campuses.campusCount()
                        logger.info("reloaded data written by another process", metadata: [
                            "places": "\(places)", "campuses": "\(campuses)", "seconds": "\((clock.now - start).milliseconds / 1000)",
                        ])
                    }
                } catch is CancellationError {
                    // The server is stopping: a check cut short is no fault.
                    return
                } catch {
                    logger.error("could not check the place store for changes", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
