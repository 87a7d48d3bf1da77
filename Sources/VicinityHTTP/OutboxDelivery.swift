import Logging
import Metrics
import ServiceLifecycle
import VicinityCore

/// Runs the services' outbox sender with the server (started with it, stopped at graceful shutdown), and
/// keeps the gauge of messages waiting up to date.
struct OutboxDelivery<S: Stores>: Service {
    let sender: OutboxSender<S>
    let logger: Logger

    /// How often the waiting messages are counted for `vicinity_outbox_pending`.
    static var gaugeInterval: Duration { .seconds(10) }

    func run() async throws {
        let logger = logger, sender = sender
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await sender.run { error in
                        logger.error("could not deliver the outbox's messages; trying again", metadata: ["error": "\(error)"])
                    }
                }
                group.addTask {
                    let gauge = Gauge(label: "vicinity_outbox_pending")
                    while !Task.isCancelled {
                        if let pending = try? await sender.pendingCount() { gauge.record(pending) }
                        try? await Task.sleep(for: Self.gaugeInterval)
                    }
                }
                await group.waitForAll()
            }
        }
    }
}

/// What the outbox's outcomes mean to operators: counters by outcome, the time from a message's recording to
/// its delivery, and a log line for what they act on (a message given up, a relay misconfigured). Never the
/// address or the text of a message.
public enum OutboxReport {
    public static func observer(logger: Logger) -> @Sendable (OutboxOutcome) -> Void {
        let delivery = Timer(label: "vicinity_outbox_delivery_seconds")
        return { outcome in
            switch outcome {
            case .sent(let after):
                Counter(label: "vicinity_outbox_total", dimensions: [("outcome", "sent")]).increment()
                delivery.recordNanoseconds(Int64(after.wholeMilliseconds) * 1_000_000)
            case .retried(let reason):
                Counter(label: "vicinity_outbox_total", dimensions: [("outcome", "retried")]).increment()
                logger.info("a message could not be delivered yet; it will be tried again", metadata: ["reason": "\(reason)"])
            case .dropped(let reason):
                Counter(label: "vicinity_outbox_total", dimensions: [("outcome", "dropped")]).increment()
                logger.notice("a message was dropped", metadata: ["reason": "\(reason)"])
            case .misconfigured(let reason):
                Counter(label: "vicinity_outbox_total", dimensions: [("outcome", "misconfigured")]).increment()
                logger.error("mail cannot be delivered until the relay settings are fixed", metadata: ["reason": "\(reason)"])
            case .overtaken:
                Counter(label: "vicinity_outbox_total", dimensions: [("outcome", "overtaken")]).increment()
            }
        }
    }
}
