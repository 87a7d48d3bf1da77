import Foundation

/// The JSON body of an alert (Apple, "Generating a remote notification"): `aps` with the alert's title and body,
/// the default sound and the thread, and the notification's own keys beside it.
struct APNsPayload: Encodable {
    /// Apple, "Sending notification requests to APNs": a regular notification's payload is at most 4 KB
    /// (4096 bytes); APNs refuses a larger one (413 PayloadTooLarge).
    static let maximumLength = 4096

    struct APS: Encodable {
        struct Alert: Encodable {
            var title: String
            var body: String
        }

        var alert: Alert
        /// "default" plays the system's sound; without a sound the alert is silent.
        var sound = "default"
        var threadID: String?

        enum CodingKeys: String, CodingKey {
            case alert, sound
            case threadID = "thread-id"
        }
    }

    var aps: APS
    var data: [String: String]

    /// The body for `notification`, or why there is none: a custom key named `aps`, or a body over the limit.
    static func body(for notification: APNsNotification) throws(APNsProblem) -> [UInt8] {
        guard notification.data["aps"] == nil else {
            throw APNsProblem("a notification's own keys cannot include aps, which is Apple's")
        }
        let payload = APNsPayload(
            aps: APS(alert: .init(title: notification.title, body: notification.body), threadID: notification.threadID),
            data: notification.data)
        let encoder = JSONEncoder()
        // Keys in a fixed order, so that one notification is one body; slashes as they are, to save bytes.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body: [UInt8]
        do {
            body = Array(try encoder.encode(payload))
        } catch {
            throw APNsProblem("the notification could not be written as JSON: \(error)")
        }
        guard body.count <= maximumLength else {
            throw APNsProblem(
                "the notification is \(body.count) bytes of JSON; APNs takes at most \(maximumLength) (Apple, \"Sending notification requests to APNs\")")
        }
        return body
    }

    /// `aps` and the custom keys, side by side at the top level.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(aps, forKey: Key("aps"))
        for (name, value) in data {
            try container.encode(value, forKey: Key(name))
        }
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { return nil }
    }
}
