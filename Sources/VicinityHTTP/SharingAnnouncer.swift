import Logging
import ServiceLifecycle
import VicinityCore

/// Announces the sharing levels given for a while whose time has run out, every `VoteRules.announcementInterval`
/// (the same second as votes' ends, since both are read off the clock and told by the next round), for as long
/// as the server runs. A failed round is logged and the next one tries again: an end is claimed with its events
/// in one transaction, so none is told twice or lost.
public struct SharingAnnouncer<S: Stores>: Service {
    let friends: FriendService<S>
    let interval: Duration
    let logger: Logger

    public init(friends: FriendService<S>, interval: Duration, logger: Logger) {
        self.friends = friends
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let count = try await friends.endSharing()
                    if count > 0 { logger.debug("announced ended sharing", metadata: ["count": "\(count)"]) }
                } catch {
                    logger.error("could not announce ended sharing", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
