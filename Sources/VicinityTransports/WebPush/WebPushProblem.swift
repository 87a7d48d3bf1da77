/// A value Web Push cannot use, said in words: a subscription, a key file, a subject, a topic or a message.
public struct WebPushProblem: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
