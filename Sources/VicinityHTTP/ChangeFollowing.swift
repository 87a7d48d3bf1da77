import Logging
import ServiceLifecycle
import VicinityCore

/// Runs the services' `ChangeFollower` with the server: started with it, stopped at graceful shutdown.
struct ChangeFollowing<S: Stores>: Service {
    let follower: ChangeFollower<S>
    let logger: Logger

    func run() async throws {
        let logger = logger
        await cancelWhenGracefulShutdown {
            await follower.run { error in
                logger.error("could not follow the record's changes; trying again", metadata: ["error": "\(error)"])
            }
        }
    }
}
