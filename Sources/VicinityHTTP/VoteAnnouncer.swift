import Logging
import ServiceLifecycle
import VicinityCore

/// Announces the votes whose time has run out, every `VoteRules.announcementInterval`, for as long as the
/// server runs; graceful shutdown stops it between rounds. A failed round is logged and the next one tries
/// again: claims are only marked once the store has them, so nothing is announced twice or skipped for good.
public struct VoteAnnouncer<S: Stores>: Service {
    let votes: VoteService<S>
    let logger: Logger

    public init(votes: VoteService<S>, logger: Logger) {
        self.votes = votes
        self.logger = logger
    }

    public func run() async throws {
        let interval = votes.rules.announcementInterval
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let count = try await votes.announceFinishes()
                    if count > 0 { logger.debug("announced finished votes", metadata: ["count": "\(count)"]) }
                    // Every round, so that a trace shows the announcer alive and when each round ended.
                    logger.trace("announcing round done")
                } catch {
                    logger.error("could not announce finished votes", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
