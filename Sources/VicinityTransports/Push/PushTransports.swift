import Crypto
import Foundation
import VicinityCore

/// The outbox's way to devices: each push goes to the client of its device's kind, as the operator configured
/// them (`serve --vapid-key`, `--apns-key`).
public struct PushTransports: PushTransport {
    public let webPush: WebPushClient?
    public let apns: APNsClient?
    /// What a push's time to live is counted from.
    let clock: any WallClock

    public init(webPush: WebPushClient?, apns: APNsClient? = nil, clock: any WallClock = SystemClock()) {
        self.webPush = webPush
        self.apns = apns
        self.clock = clock
    }

    public var kinds: Set<PushKind> { Set([webPush.map { _ in PushKind.webPush }, apns.map { _ in PushKind.apns }].compactMap { $0 }) }

    public var applicationServerKey: String? { webPush?.configuration.key.publicKeyBase64URL }

    public func deliver(_ push: OutgoingPush) async -> DeliveryOutcome {
        switch push.target {
        case .webPush(let address):
            guard let webPush else { return .misconfigured(reason: "no VAPID key is configured (vicinity serve --vapid-key)") }
            let subscription: WebPushSubscription
            do throws(WebPushProblem) {
                subscription = try WebPushSubscription(
                    endpoint: address.endpoint, p256dh: address.p256dh, auth: address.auth, allowHTTP: webPush.configuration.allowHTTP)
            } catch {
                return .gone(reason: "the subscription can no longer be used: \(error.description)")
            }
            let body: [UInt8]
            do { body = try PushMessage.webPushBody(push.notice) } catch {
                return .failed(reason: "the message could not be written: \(error)")
            }
            return await webPush.send(body, to: subscription, options: PushMessage.webPushOptions(push, at: clock.now)).deliveryOutcome
        case .apns(let address):
            guard let apns else { return .misconfigured(reason: "no APNs key is configured (vicinity serve --apns-key)") }
            let token: APNsDeviceToken, topic: APNsTopic
            do throws(APNsProblem) {
                token = try APNsDeviceToken(address.token)
                topic = try APNsTopic(address.topic)
            } catch {
                return .gone(reason: "the device can no longer be used: \(error.description)")
            }
            return await apns.send(PushMessage.apnsNotification(push), to: token, topic: topic, id: PushMessage.apnsID(push.id))
                .deliveryOutcome
        }
    }
}

/// What a push says on each platform, from its notice.
enum PushMessage {
    /// What the page's service worker reads (`event.data.json()`): the notice's words, where to open, and the
    /// event's number, for the page to find the event among those it reads over the API.
    struct WebPushBody: Encodable {
        var type: String
        var title: String
        var body: String
        var url: String
        var tag: String?
        var event: Int64
    }

    static func webPushBody(_ notice: PushNotice) throws -> [UInt8] {
        let message = WebPushBody(
            type: notice.type.rawValue, title: notice.title, body: notice.body, url: notice.url, tag: notice.tag,
            event: notice.event.rawValue)
        let encoder = JSONEncoder()
        // Keys sorted, so that every try of one message is the same bytes before encryption.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(message))
    }

    /// Kept by the push service until the push is no use; normal urgency (RFC 8030 §5.3: what a chat message
    /// is); the tag as the `Topic`, so that a push not yet delivered is replaced by the next of the same tag.
    static func webPushOptions(_ push: OutgoingPush, at now: Timestamp) -> WebPushOptions {
        let left = max(Duration.zero, push.expiresAt - now)
        let topic = collapseKey(push).flatMap { try? WebPushTopic($0) }
        return WebPushOptions(timeToLive: left, urgency: .normal, topic: topic)
    }

    /// The alert, and the notice's kind, page and event beside `aps` for the app; kept by APNs until the push is
    /// no use, and replacing an alert of the same tag (`collapseKey`).
    static func apnsNotification(_ push: OutgoingPush) -> APNsNotification {
        APNsNotification(
            title: push.notice.title, body: push.notice.body,
            data: ["type": push.notice.type.rawValue, "url": push.notice.url, "event": String(push.notice.event.rawValue)],
            expiration: push.expiresAt.date, collapseID: collapseKey(push), threadID: PushCategory(push.notice.type)?.rawValue)
    }

    /// The outbox message's id as the UUID `apns-id` takes, the same for every try of it: the first 16 bytes of
    /// its SHA-256, marked as a version 4 (random) UUID (RFC 9562 §5.4), since the id itself is random.
    static func apnsID(_ id: OutboxID) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(id.rawValue.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// The notice's tag as the push service and Apple see it: the `Topic` and `apns-collapse-id` are not
    /// encrypted, and a tag names who poked or which vote, so the key is a digest of the tag under the device's
    /// id, which only this service knows: pushes of one tag to one device still replace each other, and no one
    /// else can tell whose they are or link two devices' pushes. 32 characters of base64url, as a `Topic`
    /// takes (RFC 8030 §5.4).
    static func collapseKey(_ push: OutgoingPush) -> String? {
        guard let tag = push.notice.tag else { return nil }
        let digest = SHA256.hash(data: Array((push.device.rawValue + "\n" + tag).utf8))
        return String(Base64URL.encode(Array(digest)).prefix(WebPushTopic.maximumLength))
    }
}
