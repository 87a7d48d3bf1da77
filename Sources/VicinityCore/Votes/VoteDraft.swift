import GeoCore

/// What a vote asks: one line of text.
public struct VoteSubject: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Long enough for a question ("Where do we eat after the lab on Friday?"), short enough for a list row.
    public static let maximumLength = 200

    public init(_ text: String) throws(ValidationError) {
        rawValue = try OneLine.check(text, field: "subject", maximumLength: Self.maximumLength)
    }

    public var description: String { rawValue }
}

/// The choices of a vote, in the order voters see them; a ballot names one by its index.
public struct VoteOptions: Hashable, Sendable {
    public let texts: [String]

    /// Twenty fit a phone screen without scrolling far; more is a survey, not a vote.
    public static let count = 2...20
    public static let maximumLength = 100

    /// Each option is one line of text; no two may read the same ignoring case and accents, which would make
    /// a ballot's meaning depend on where the voter tapped.
    public init(_ texts: [String]) throws(ValidationError) {
        guard Self.count.contains(texts.count) else {
            throw ValidationError(
                field: "options", message: "must hold \(Self.count.lowerBound) to \(Self.count.upperBound) options, not \(texts.count)")
        }
        var checked: [String] = []
        var seen: [String: Int] = [:]
        for (index, text) in texts.enumerated() {
            let option = try OneLine.check(text, field: "options[\(index)]", maximumLength: Self.maximumLength)
            let key = NameMatch.folded(option)
            if let first = seen[key] {
                throw ValidationError(field: "options[\(index)]", message: "reads the same as options[\(first)]")
            }
            seen[key] = index
            checked.append(option)
        }
        self.texts = checked
    }

    /// The option a ballot names, checked against this vote's options.
    public func option(_ index: Int) throws(ValidationError) -> Int {
        guard texts.indices.contains(index) else {
            throw ValidationError(field: "option", message: "must be an index into the vote's options, 0 to \(texts.count - 1)")
        }
        return index
    }
}

/// How many people are to vote: the vote finishes when that many ballots are cast.
public struct ParticipantCount: Hashable, Sendable, CustomStringConvertible {
    public let value: Int

    /// A large lecture hall.
    public static let maximum = 1000

    public init(_ value: Int) throws(ValidationError) {
        guard (1...Self.maximum).contains(value) else {
            throw ValidationError(field: "participants", message: "must be an integer in [1, \(Self.maximum)]")
        }
        self.value = value
    }

    public var description: String { String(value) }
}

/// How long a vote stays open: one of the app's choices, or until every participant has voted.
public enum VoteDuration: Hashable, Sendable, CustomStringConvertible {
    case minutes(Int)
    case permanent

    public static let allowedMinutes = [5, 15, 30, 60]

    /// `5m`, `15m`, `30m`, `60m` or `permanent`.
    public init(_ text: String) throws(ValidationError) {
        if text == "permanent" {
            self = .permanent
        } else if text.hasSuffix("m"), let minutes = Int(text.dropLast()), Self.allowedMinutes.contains(minutes),
            String(minutes) + "m" == text
        {
            self = .minutes(minutes)
        } else {
            throw ValidationError(field: "duration", message: "must be one of 5m, 15m, 30m, 60m, permanent")
        }
    }

    /// For stores: nil for permanent.
    public init(storedMinutes: Int?) throws(ValidationError) {
        switch storedMinutes {
        case nil: self = .permanent
        case let minutes? where Self.allowedMinutes.contains(minutes): self = .minutes(minutes)
        case let minutes?: throw ValidationError(field: "duration", message: "\(minutes) minutes is not a vote duration")
        }
    }

    public var minutes: Int? {
        if case .minutes(let minutes) = self { minutes } else { nil }
    }

    public var description: String { minutes.map { "\($0)m" } ?? "permanent" }
}

/// Who finds a vote: everyone nearby, or only those given its id.
public enum VoteVisibility: String, Hashable, Sendable, CaseIterable {
    case `public`
    case `private`
}

/// A vote's password: exactly six ASCII digits, said aloud in the room so that only those present vote.
public struct VotePassword: Sendable, CustomStringConvertible {
    let digits: String

    public static let length = 6

    public init(_ text: String, field: String = "password") throws(ValidationError) {
        guard text.utf8.count == Self.length, text.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw ValidationError(field: field, message: "must be exactly \(Self.length) digits 0-9")
        }
        digits = text
    }

    /// The text the hasher takes: six digits are never cut or misread by bcrypt.
    public var hashable: Password { Password(uncheckedNormalized: digits) }

    /// Never the password itself, so that it cannot reach a log by accident.
    public var description: String { "VotePassword(redacted)" }
}

/// What it takes to open a vote.
public struct VoteDraft: Sendable {
    public var subject: VoteSubject
    public var options: VoteOptions
    public var participants: ParticipantCount
    public var password: VotePassword
    public var duration: VoteDuration
    public var visibility: VoteVisibility
    public var anonymous: Bool
    /// Ballots only from accounts with a verified e-mail address; nil for the service's default
    /// (`VoteRules.verifiedOnlyByDefault`).
    public var verifiedOnly: Bool?
    /// Where the vote is held; nil for the initiator's current position.
    public var location: Coordinate?

    public init(
        subject: VoteSubject, options: VoteOptions, participants: ParticipantCount, password: VotePassword,
        duration: VoteDuration, visibility: VoteVisibility, anonymous: Bool, verifiedOnly: Bool? = nil, location: Coordinate?
    ) {
        self.subject = subject
        self.options = options
        self.participants = participants
        self.password = password
        self.duration = duration
        self.visibility = visibility
        self.anonymous = anonymous
        self.verifiedOnly = verifiedOnly
        self.location = location
    }
}

/// One line of text without control characters, trimmed, non-empty and at most so many code points.
enum OneLine {
    static func check(_ text: String, field: String, maximumLength: Int) throws(ValidationError) -> String {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { throw ValidationError(field: field, message: "must not be empty") }
        guard trimmed.unicodeScalars.count <= maximumLength else {
            throw ValidationError(field: field, message: "must be at most \(maximumLength) characters")
        }
        guard !trimmed.unicodeScalars.contains(where: \.isControl) else {
            throw ValidationError(field: field, message: "must be one line without control characters")
        }
        return trimmed
    }
}
