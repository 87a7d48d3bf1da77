import Logging
import ServiceLifecycle
import VicinityCore

/// Runs the services' `ChangeFollower`, and the `FriendMoves` it feeds, with the server: started with it,
/// stopped at graceful shutdown.
struct ChangeFollowing<S: Stores>: Service {
    let follower: ChangeFollower<S>
    let moves: FriendMoves<S>
    let logger: Logger

    func run() async throws {
        let logger = logger
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await follower.run { error in
                        logger.error("could not follow the record's changes; trying again", metadata: ["error": "\(error)"])
                    }
                }
                group.addTask {
                    await moves.run { error in
                        logger.warning("could not tell friends of a move", metadata: ["error": "\(error)"])
                    }
                }
                await group.waitForAll()
            }
        }
    }
}
