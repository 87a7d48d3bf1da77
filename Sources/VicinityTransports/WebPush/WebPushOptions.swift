/// How a push service is to treat one message (RFC 8030 §5.2–§5.4): how long to keep it for a browser that is
/// offline, how urgently to wake the device, and which earlier message it replaces.
public struct WebPushOptions: Hashable, Sendable {
    /// RFC 8030 §5.2: how long the push service keeps the message for a browser that cannot take it now; zero
    /// is now or never. Sent in whole seconds, a negative time as zero (a message whose life is over).
    public var timeToLive: Duration
    public var urgency: WebPushUrgency
    /// RFC 8030 §5.4: a message with the topic of one still waiting replaces it (a vote's result replaces its
    /// earlier news).
    public var topic: WebPushTopic?

    public init(timeToLive: Duration, urgency: WebPushUrgency = .normal, topic: WebPushTopic? = nil) {
        self.timeToLive = timeToLive
        self.urgency = urgency
        self.topic = topic
    }

    /// The `TTL` header's value: delta-seconds (RFC 8030 §5.2).
    var timeToLiveSeconds: Int64 { max(0, timeToLive.components.seconds) }
}

/// RFC 8030 §5.3: how soon the device should be woken for a message; a device saving its battery takes only the
/// more urgent ones.
public enum WebPushUrgency: String, Hashable, Sendable, CaseIterable {
    case veryLow = "very-low"
    case low
    case normal
    case high
}

/// RFC 8030 §5.4: a topic names what a message is about, so that a newer message on it replaces one still
/// waiting: at most 32 characters of the base64url alphabet.
public struct WebPushTopic: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// RFC 8030 §5.4: a topic is at most 32 characters.
    public static let maximumLength = 32

    public init(_ text: String) throws(WebPushProblem) {
        guard !text.isEmpty, text.utf8.count <= Self.maximumLength, text.utf8.allSatisfy(Self.isBase64URL) else {
            throw WebPushProblem("a push topic is 1 to \(Self.maximumLength) characters of A-Z, a-z, 0-9, - and _ (RFC 8030 §5.4)")
        }
        rawValue = text
    }

    public var description: String { rawValue }

    /// RFC 4648 §5: the URL and filename safe alphabet.
    static func isBase64URL(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
