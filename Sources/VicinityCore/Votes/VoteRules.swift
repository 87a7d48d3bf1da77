/// The vote app's rules: limits on guessing passwords and on opening votes.
public struct VoteRules: Hashable, Sendable {
    /// Wrong passwords per person and vote, and per client address over all votes. With the standard rules a
    /// person gets 5 tries, then waits 15 minutes (the right password refused too), 30 after the next 5, and
    /// so on up to a day, but never past the end of a timed vote; an address gets 100 wrong passwords in 15
    /// minutes. Sign-ups are limited per address (`AccountRules.signUpsPerAddress`), so new accounts do not buy
    /// new tries faster than that: one address tries at most 400 of the million passwords an hour.
    public var passwords: GuessingRules
    /// Votes one person opens. Thirty an hour is a busy teacher's day of polls; it keeps one account from
    /// filling a campus's list of nearby votes.
    public var openings: RateLimit
    /// How often the server looks for votes whose time ran out, to tell their voters: the longest a
    /// "vote finished" event may come after `closes_at`. Votes that fill up are told at their last ballot.
    public var announcementInterval: Duration
    /// Lookups of vote ids that name no vote, per person and per client address. Ids are six of 30 symbols
    /// (729 million); a person who mistypes one a few times stays far below 20 an hour, while a scanner is held
    /// to 100 an hour per address however many accounts it makes: 2,400 ids a day, one in 300,000 of them.
    public var unknownLookups: RateLimit
    public var unknownLookupsPerAddress: RateLimit
    /// How long an initiator has to settle name conflicts before the result is published as it stands: a day
    /// reaches a teacher who opened a vote in the morning's lecture by the next one. Fixed in each vote when it
    /// opens.
    public var settlingTime: Duration
    /// Whether a vote takes verified voters only when its draft does not say (`VoteDraft.verifiedOnly`): the
    /// default where every account's address is confirmed (`serve --require-email`).
    public var verifiedOnlyByDefault: Bool

    public static let standard = VoteRules(
        passwords: .standard, openings: RateLimit(limit: 30, window: .seconds(3600)), announcementInterval: .seconds(1),
        unknownLookups: RateLimit(limit: 20, window: .seconds(3600)),
        unknownLookupsPerAddress: RateLimit(limit: 100, window: .seconds(3600)), settlingTime: .seconds(24 * 3600),
        verifiedOnlyByDefault: false)

    public init(
        passwords: GuessingRules, openings: RateLimit, announcementInterval: Duration, unknownLookups: RateLimit,
        unknownLookupsPerAddress: RateLimit, settlingTime: Duration, verifiedOnlyByDefault: Bool = false
    ) {
        self.verifiedOnlyByDefault = verifiedOnlyByDefault
        self.passwords = passwords
        self.openings = openings
        self.announcementInterval = announcementInterval
        self.unknownLookups = unknownLookups
        self.unknownLookupsPerAddress = unknownLookupsPerAddress
        self.settlingTime = settlingTime
    }
}
