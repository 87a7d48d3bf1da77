import GeoCore

/// A vote's identifier, made to be read aloud in a room and typed on a phone: six characters from an
/// alphabet without look-alikes (no 0/O, 1/I/L, nor U, which reads as V), random, so that one id says
/// nothing about any other.
///
/// 30 symbols over 6 places give 729 million ids: a new vote meets a taken id once in 72,900 tries with
/// 10,000 votes stored (and then draws again), and a guessed id finds a vote as rarely. Letters are read in
/// either case; ids are written in upper case.
public struct VoteID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    public static let length = 6

    /// Nil for text that is not a vote id in either case.
    public init?(_ text: String) {
        guard text.utf8.count == Self.length else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.length)
        for byte in text.utf8 {
            // ASCII lower case to upper case; anything else must already be a symbol of the alphabet.
            let upper = (97...122).contains(byte) ? byte - 32 : byte
            guard upper < 128, Self.isSymbol[Int(upper)] else { return nil }
            bytes.append(upper)
        }
        rawValue = String(decoding: bytes, as: UTF8.self)
    }

    /// Ids that read as a word of the HTTP paths (`/v1/votes/nearby`) are never given out.
    public static let reserved: Set<String> = ["NEARBY"]

    public static func random() -> VoteID {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] }
            let text = String(decoding: bytes, as: UTF8.self)
            if !reserved.contains(text) { return VoteID(unchecked: text) }
        }
    }

    private init(unchecked: String) { rawValue = unchecked }

    private static let isSymbol: [Bool] = (0..<128).map { alphabet.contains(UInt8($0)) }

    public static func < (lhs: VoteID, rhs: VoteID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
}

public enum BallotKind {}
/// A ballot's identifier: what the initiator names when voiding or restoring one.
public typealias BallotID = RandomIdentifier<BallotKind>

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

extension VoteOptions {
    /// The options as the SQL stores keep them: a JSON array of their texts, written the same way by every
    /// writer, so that a ballot's question can be compared with the stored one.
    public var storedJSON: String {
        String(decoding: JSONValue.array(texts.map(JSONValue.string)).jsonBytes, as: UTF8.self)
    }

    /// Options read back from a store's JSON array; anything else in the row is a corrupt store.
    public init(storedJSON text: String, vote id: String) throws {
        guard case .array(let values) = try JSONValue(jsonBytes: Array(text.utf8)) else {
            throw StoreError.corrupt("options of vote \(id) are not a JSON array")
        }
        let texts = try values.map { value -> String in
            guard case .string(let text) = value else { throw StoreError.corrupt("an option of vote \(id) is not text") }
            return text
        }
        try self.init(texts)
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
    /// Where the vote is held; nil for the initiator's current position.
    public var location: Coordinate?

    public init(
        subject: VoteSubject, options: VoteOptions, participants: ParticipantCount, password: VotePassword,
        duration: VoteDuration, visibility: VoteVisibility, anonymous: Bool, location: Coordinate?
    ) {
        self.subject = subject
        self.options = options
        self.participants = participants
        self.password = password
        self.duration = duration
        self.visibility = visibility
        self.anonymous = anonymous
        self.location = location
    }
}

/// A vote as stored: its settings, where it is held, how many have voted and what its initiator did to it.
/// Its state is not stored but read off the clock (`state(at:)`), so a vote whose time (or settling time) is up
/// has moved on for every reader whether or not anything ran at that moment.
public struct Vote: Hashable, Sendable {
    public var id: VoteID
    public var initiator: UserID
    public var subject: VoteSubject
    public var options: VoteOptions
    public var participants: ParticipantCount
    public var duration: VoteDuration
    public var visibility: VoteVisibility
    public var anonymous: Bool
    public var location: Coordinate
    /// Where the vote is held in words, "Around Hall of Science", as the initiator was told when opening it.
    public var label: String
    public var createdAt: Timestamp
    /// Ballots cast, voided ones included: a voided ballot was still cast by a participant.
    public var ballotsCast: Int
    /// When the last participant voted; nil until then.
    public var completedAt: Timestamp?
    /// The one extension of a timed vote, if its initiator gave it.
    public var extendedBy: VoteDuration?
    /// When the initiator closed the vote before its time.
    public var closedAt: Timestamp?
    /// When the initiator called the vote off: it then has no result.
    public var cancelledAt: Timestamp?
    /// Whether two or more ballots carry names that read the same, so that the vote settles before its result
    /// is published. Never set on an anonymous vote, which shows no names.
    public var nameConflict: Bool
    /// How long the initiator has to settle name conflicts once the vote ends, fixed when it opens, so that
    /// a change of the server's setting never moves a vote already running.
    public var settlingTime: Duration
    /// When the initiator ended settling and published the result.
    public var publishedAt: Timestamp?
    /// Raised by every change of the row (a ballot, an initiator's action), so that a copy held in memory
    /// keeps the newest of two copies that arrive out of order.
    public var revision: Int

    public init(
        id: VoteID, initiator: UserID, subject: VoteSubject, options: VoteOptions, participants: ParticipantCount,
        duration: VoteDuration, visibility: VoteVisibility, anonymous: Bool, location: Coordinate, label: String,
        createdAt: Timestamp, settlingTime: Duration = VoteRules.standard.settlingTime, ballotsCast: Int = 0,
        completedAt: Timestamp? = nil, extendedBy: VoteDuration? = nil, closedAt: Timestamp? = nil,
        cancelledAt: Timestamp? = nil, nameConflict: Bool = false, publishedAt: Timestamp? = nil, revision: Int = 0
    ) {
        self.id = id
        self.initiator = initiator
        self.subject = subject
        self.options = options
        self.participants = participants
        self.duration = duration
        self.visibility = visibility
        self.anonymous = anonymous
        self.location = location
        self.label = label
        self.createdAt = createdAt
        self.settlingTime = settlingTime
        self.ballotsCast = ballotsCast
        self.completedAt = completedAt
        self.extendedBy = extendedBy
        self.closedAt = closedAt
        self.cancelledAt = cancelledAt
        self.nameConflict = nameConflict
        self.publishedAt = publishedAt
        self.revision = revision
    }

    /// What the vote asks: what a ballot answers, checked again under the vote's lock when it is recorded.
    public var question: VoteQuestion { VoteQuestion(subject: subject, options: options) }

    /// When a timed vote runs out, its extension included; nil for a permanent vote.
    public var closesAt: Timestamp? {
        duration.minutes.map { createdAt + .seconds(($0 + (extendedBy?.minutes ?? 0)) * 60) }
    }

    /// When and why ballots stopped being taken, as of `now`; nil while they are taken. Completion and closing
    /// end a vote whatever the time asked about, so that a ballot stamped just before either is still refused.
    public func ending(at now: Timestamp) -> (reason: VoteState.FinishReason, at: Timestamp)? {
        if let completedAt { return (.allVoted, completedAt) }
        if let closedAt { return (.closed, closedAt) }
        if let closesAt, closesAt <= now { return (.timeUp, closesAt) }
        return nil
    }

    public func state(at now: Timestamp) -> VoteState {
        if let cancelledAt { return .cancelled(at: cancelledAt) }
        guard let end = ending(at: now) else { return .open }
        let (reason, ended) = end
        guard nameConflict else { return .finished(reason, at: ended) }
        if let publishedAt { return .finished(reason, at: publishedAt) }
        let until = ended + settlingTime
        return until <= now ? .finished(reason, at: until) : .settling(reason, endedAt: ended, until: until)
    }

    public func isOpen(at now: Timestamp) -> Bool { state(at: now) == .open }
}

/// A vote's subject and options: what a ballot's option index refers to.
public struct VoteQuestion: Hashable, Sendable {
    public var subject: VoteSubject
    public var options: VoteOptions

    public init(subject: VoteSubject, options: VoteOptions) {
        self.subject = subject
        self.options = options
    }
}

/// Whether a vote takes ballots, and if not, why and since when.
public enum VoteState: Hashable, Sendable {
    case open
    /// Voting has ended with ballots under names that read the same; the initiator settles them until `until`,
    /// and the result waits.
    case settling(FinishReason, endedAt: Timestamp, until: Timestamp)
    /// The result is out, since `at`.
    case finished(FinishReason, at: Timestamp)
    /// The initiator called the vote off: no result.
    case cancelled(at: Timestamp)

    /// Why voting ended.
    public enum FinishReason: String, Hashable, Sendable {
        case allVoted = "all_voted"
        case timeUp = "time_up"
        case closed
    }

    /// `open`, `settling`, `finished` or `cancelled`: the state's name on the wire.
    public var name: String {
        switch self {
        case .open: "open"
        case .settling: "settling"
        case .finished: "finished"
        case .cancelled: "cancelled"
        }
    }
}

/// How a settled vote's result was published.
public struct Settlement: Hashable, Sendable {
    public enum Publisher: String, Hashable, Sendable {
        /// The initiator published it.
        case initiator
        /// The settling time ran out with the ballots as they stood.
        case time
    }

    public var by: Publisher
    public var at: Timestamp

    public init(by: Publisher, at: Timestamp) {
        self.by = by
        self.at = at
    }
}

/// What an initiator does to their vote.
public enum VoteChange: Hashable, Sendable {
    /// Ends voting now, with the ballots cast so far.
    case close
    /// Calls the vote off: no result.
    case cancel
    /// Gives a timed vote more time, once.
    case extend(VoteDuration)
    /// Changes what the vote asks, before anyone has voted.
    case edit(subject: VoteSubject?, options: VoteOptions?)
    /// Ends settling and publishes the result.
    case publish
}

extension Vote {
    /// The vote after `change` at `now`, or why the change is refused. The rules live here, once; stores apply
    /// them under the vote's lock (`VoteStore.updateVote`), so two changes never both pass against one state.
    public mutating func apply(_ change: VoteChange, at now: Timestamp) throws(ServiceError) {
        let state = state(at: now)
        switch change {
        case .close:
            guard state == .open else { throw Self.refusal(in: state) }
            closedAt = now
        case .cancel:
            switch state {
            case .open, .settling: cancelledAt = now
            case .finished: throw .conflict(.resultFinal)
            case .cancelled: throw .conflict(.voteCancelled)
            }
        case .extend(let more):
            guard state == .open else { throw Self.refusal(in: state) }
            guard duration != .permanent else { throw .conflict(.permanentVote) }
            guard more != .permanent else {
                throw .invalid("duration", "must be one of 5m, 15m, 30m, 60m: an extension is a length of time")
            }
            guard extendedBy == nil else { throw .conflict(.alreadyExtended) }
            extendedBy = more
        case .edit(let subject, let options):
            guard state == .open else { throw Self.refusal(in: state) }
            guard ballotsCast == 0 else { throw .conflict(.ballotsAlreadyCast) }
            if let subject { self.subject = subject }
            if let options { self.options = options }
        case .publish:
            switch state {
            case .settling: publishedAt = now
            case .open: throw .conflict(.voteOpen)
            case .finished: throw .conflict(.resultFinal)
            case .cancelled: throw .conflict(.voteCancelled)
            }
        }
        revision += 1
    }

    /// Whether the initiator may set `ballot` to `counted` at `now`: only while the vote settles, and only by
    /// the rule of name conflicts (`Ballot.checkSettling`).
    public func checkCountChange(
        _ ballot: BallotID, counted: Bool, among ballots: [Ballot], at now: Timestamp
    ) throws(ServiceError) {
        switch state(at: now) {
        case .open: throw .conflict(.voteOpen)
        case .finished: throw .conflict(.resultFinal)
        case .cancelled: throw .conflict(.voteCancelled)
        case .settling: try Ballot.checkSettling(ballot, counted: counted, among: ballots)
        }
    }

    /// Refuses (as a store fault) a change that altered a field other than those an initiator changes, which
    /// the SQL stores would not write: every store calls it after `VoteStore.updateVote`'s closure, so that the
    /// three agree on what such a change may touch.
    public func checkInitiatorChange(from old: Vote) throws(StoreError) {
        var expected = old
        expected.subject = subject
        expected.options = options
        expected.extendedBy = extendedBy
        expected.closedAt = closedAt
        expected.cancelledAt = cancelledAt
        expected.publishedAt = publishedAt
        expected.revision = revision
        guard expected == self else { throw StoreError.database("a change of vote \(id) touched a field an initiator does not change") }
    }

    /// Why a change that needs an open vote is refused in `state`.
    private static func refusal(in state: VoteState) -> ServiceError {
        switch state {
        case .open, .settling, .finished: .conflict(.voteFinished)
        case .cancelled: .conflict(.voteCancelled)
        }
    }
}

/// One person's ballot. Only the voter is ever shown `option`; everyone else sees at most that a ballot
/// exists, by whom (unless the vote is anonymous) and whether it is counted.
public struct Ballot: Hashable, Sendable {
    public var id: BallotID
    public var vote: VoteID
    public var voter: UserID
    /// The voter's display name when voting, which the result lists and name conflicts compare.
    public var voterName: String
    public var option: Int
    public var castAt: Timestamp
    /// False once the initiator voids it.
    public var counted: Bool

    public init(id: BallotID, vote: VoteID, voter: UserID, voterName: String, option: Int, castAt: Timestamp, counted: Bool = true) {
        self.id = id
        self.vote = vote
        self.voter = voter
        self.voterName = voterName
        self.option = option
        self.castAt = castAt
        self.counted = counted
    }

    /// Names that compare the same here read the same in a result: case and accents are ignored.
    public var nameKey: String { Self.nameKey(voterName) }

    /// Whether the initiator may set `ballot` to `counted` among the vote's `ballots`, when settling name
    /// conflicts: only ballots that share their voter's name with another ballot, and never the last counted
    /// ballot of a name. Voiding at will would let an initiator void every ballot but one person's and read
    /// that choice from the tally; this confines voiding to real name conflicts. It does not stop an initiator
    /// who casts look-alike ballots under every other voter's name from voiding the real ones: that costs an
    /// account per voter, made for the occasion, which the conflict view shows (`BallotSummary.voterSince`).
    public static func checkSettling(
        _ ballot: BallotID, counted: Bool, among ballots: [Ballot]
    ) throws(ServiceError) {
        guard let target = ballots.first(where: { $0.id == ballot }) else { throw .notFound(.ballot) }
        let sameName = ballots.filter { $0.nameKey == target.nameKey }
        guard sameName.count > 1 else { throw .conflict(.notInNameConflict) }
        if !counted, target.counted, sameName.filter(\.counted).count == 1 { throw .conflict(.lastCountedOfName) }
    }

    public static func nameKey(_ name: String) -> String { NameMatch.folded(name) }

    /// The ballots that share their voter's name with another, one group per name (in the order cast), the
    /// groups by name: what the initiator settles, and what `vote_conflict` counts.
    public static func nameConflicts(among ballots: [Ballot]) -> [[Ballot]] {
        Dictionary(grouping: ballots, by: \.nameKey).values
            .filter { $0.count > 1 }
            .sorted { a, b in a[0].voterName != b[0].voterName ? a[0].voterName < b[0].voterName : a[0].id < b[0].id }
    }
}

extension Ballot {
    /// The ballot as its voter reads it: the only form that names a choice, and only to its voter.
    public var ownJSON: JSONValue {
        .object([
            "id": .string(id.rawValue),
            "option": .number(Double(option)),
            "counted": .bool(counted),
            "cast_at": .string(castAt.rfc3339),
        ])
    }
}

extension VoteResult {
    /// Counts the vote's ballots as `viewer` reads the result: the tally, the winners and the voters' names are
    /// the same for everyone allowed to see them; only `yourBallot` is the viewer's own.
    public init(vote view: VoteView, ballots: [Ballot], for viewer: UserID) {
        var tally = Array(repeating: 0, count: view.vote.options.texts.count)
        for ballot in ballots where ballot.counted { tally[ballot.option] += 1 }
        let voided = ballots.count { !$0.counted }
        let most = tally.max() ?? 0
        let voters = view.vote.anonymous ? nil : ballots
            .map { VoterEntry(name: $0.voterName, counted: $0.counted) }
            .enumerated()
            .sorted { a, b in a.element.name != b.element.name ? a.element.name < b.element.name : a.offset < b.offset }
            .map(\.element)
        self.init(
            view: view, tally: tally, winners: most == 0 ? [] : tally.indices.filter { tally[$0] == most },
            ballotsCounted: tally.reduce(0, +), ballotsVoided: voided, voters: voters,
            yourBallot: ballots.first { $0.voter == viewer })
    }

    /// Everything of the result but the vote's public facts: what `GET /v1/votes/{id}/result` adds to them.
    public var outcomeFields: [String: JSONValue] {
        var fields = tallyFields
        fields["voters"] = voters.map { voters in
            .array(voters.map { .object(["name": .string($0.name), "counted": .bool($0.counted)]) })
        } ?? .null
        return fields
    }

    /// The outcome without the voters' names: what a `vote_finished` event carries to each who may see it.
    /// One event per voter, each with every name, would grow with the square of a lecture hall; the names
    /// are one `GET /v1/votes/{id}/result` away.
    public var tallyFields: [String: JSONValue] {
        let options = view.vote.options.texts
        return [
            "tally": .array(options.indices.map { index in
                .object([
                    "index": .number(Double(index)),
                    "option": .string(options[index]),
                    "ballots": .number(Double(tally[index])),
                ])
            }),
            "winners": .array(winners.map { .number(Double($0)) }),
            "participants": .number(Double(view.vote.participants.value)),
            "ballots_cast": .number(Double(view.vote.ballotsCast)),
            "ballots_counted": .number(Double(ballotsCounted)),
            "ballots_voided": .number(Double(ballotsVoided)),
            "settlement": view.settlement?.jsonValue ?? .null,
            "your_ballot": yourBallot?.ownJSON ?? .null,
        ]
    }
}

/// A user's part in votes, for their history.
public enum VoteRole: String, Hashable, Sendable, CaseIterable {
    case initiated
    case attended
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
