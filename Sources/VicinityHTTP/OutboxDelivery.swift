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

/// What the outbox's outcomes mean to operators: counters by outcome and channel (mail, webpush, apns), the
/// time from a message's recording to its delivery, and a log line for what they act on (a message given up, a
/// transport misconfigured). Never the address, the device or the text of a message.
public enum OutboxReport {
    public static func observer(logger: Logger) -> @Sendable (OutboxOutcome) -> Void {
        let delivery = Dictionary(uniqueKeysWithValues: OutboxChannel.allCases.map { channel in
            (channel, Timer(label: "vicinity_outbox_delivery_seconds", dimensions: [("channel", channel.rawValue)]))
        })
        @Sendable func count(_ outcome: String, _ channel: OutboxChannel) {
            Counter(label: "vicinity_outbox_total", dimensions: [("outcome", outcome), ("channel", channel.rawValue)]).increment()
        }
        return { outcome in
            switch outcome {
            case .sent(let after, let channel):
                count("sent", channel)
                delivery[channel]?.recordNanoseconds(Int64(after.wholeMilliseconds) * 1_000_000)
            case .retried(let reason, let channel):
                count("retried", channel)
                logger.info("a message could not be delivered yet; it will be tried again", metadata: ["reason": "\(reason)", "channel": "\(channel.rawValue)"])
            case .dropped(let reason, let channel):
                count("dropped", channel)
                logger.notice("a message was dropped", metadata: ["reason": "\(reason)", "channel": "\(channel.rawValue)"])
            case .gone(let reason, let channel):
                count("gone", channel)
                logger.info("a device is gone from its push service; it was removed", metadata: ["reason": "\(reason)", "channel": "\(channel.rawValue)"])
            case .misconfigured(let reason, let channel):
                count("misconfigured", channel)
                logger.error("messages cannot be delivered until the transport's settings are fixed", metadata: ["reason": "\(reason)", "channel": "\(channel.rawValue)"])
            case .overtaken:
                Counter(label: "vicinity_outbox_total", dimensions: [("outcome", "overtaken")]).increment()
            }
        }
    }
}
