import GeoCore
import VicinityCore

extension StoredVote: SQLRecord {
    public static let schema = RecordSchema<StoredVote>(
        "vote", key: ["id"], point: PointColumns(latitude: "lat", longitude: "lon"), followed: true,
        fields: [
            SQLField("id", .text) { .text($0.vote.id.rawValue) },
            SQLField("initiator_id", .text) { .optionalText($0.vote.initiator?.rawValue) },
            SQLField("subject", .text) { .text($0.vote.subject.rawValue) },
            SQLField("options", .json(postgresType: "jsonb")) { .text(StoredJSON.texts($0.vote.options.texts)) },
            SQLField("participants", .integer) { .whole($0.vote.participants.value) },
            SQLField("password_hash", .text) { .text($0.passwordHash.encoded) },
            SQLField("duration_minutes", .integer) { .optionalWhole($0.vote.duration.minutes) },
            SQLField("visibility", .text) { .text($0.vote.visibility.rawValue) },
            SQLField("anonymous", .boolean) { .bool($0.vote.anonymous) },
            SQLField("verified_only", .boolean) { .bool($0.vote.verifiedOnly) },
            SQLField("lat", .real) { .real($0.vote.location.latitude) },
            SQLField("lon", .real) { .real($0.vote.location.longitude) },
            SQLField("label", .text) { .text($0.vote.label) },
            SQLField("created_at", .integer) { .time($0.vote.createdAt) },
            SQLField("closes_at", .integer, .fixedRule) { .optionalTime($0.vote.closesAt) },
            SQLField("ballots_cast", .integer) { .whole($0.vote.ballotsCast) },
            SQLField("completed_at", .integer) { .optionalTime($0.vote.completedAt) },
            SQLField("extended_minutes", .integer) { .optionalWhole($0.vote.extendedBy?.minutes) },
            SQLField("closed_at", .integer) { .optionalTime($0.vote.closedAt) },
            SQLField("cancelled_at", .integer) { .optionalTime($0.vote.cancelledAt) },
            SQLField("name_conflict", .boolean) { .bool($0.vote.nameConflict) },
            SQLField("settling_ms", .integer) { .integer($0.vote.settlingTime.wholeMilliseconds) },
            SQLField("published_at", .integer) { .optionalTime($0.vote.publishedAt) },
            SQLField("revision", .integer) { .whole($0.vote.revision) },
            SQLField("settling_announced", .boolean) { .bool($0.settlingAnnounced) },
            SQLField("finish_announced", .boolean) { .bool($0.finishAnnounced) },
            SQLField("taking_ballots", .boolean, .rule(version: StoredVote.timesRuleVersion)) { .bool($0.takesBallots) },
            SQLField("voting_ends_at", .integer, .rule(version: StoredVote.timesRuleVersion)) { .optionalTime($0.votingEndsAt) },
            SQLField("final_at", .integer, .rule(version: StoredVote.timesRuleVersion)) { .optionalTime($0.finalAt) },
            SQLField("announcement_due_at", .integer, .rule(version: StoredVote.timesRuleVersion)) {
                .optionalTime($0.announcementDueAt)
            },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("id")
        guard let voteID = VoteID(id), voteID.rawValue == id else { throw .corrupt("vote id \(id) is malformed") }
        let options = try StoredJSON.texts(try row.text("options"), of: "the options of vote \(id)")
        let visibilityText = try row.text("visibility")
        guard let visibility = VoteVisibility(rawValue: visibilityText) else {
            throw .corrupt("vote \(id) has the visibility \(visibilityText)")
        }
        let initiator = try row.optionalText("initiator_id").map { text throws(StoreError) in try UserID.stored(text) }
        let subject = try row.text("subject"), verifiedOnly = try row.bool("verified_only")
        let participants = try row.whole("participants"), hash = try row.text("password_hash")
        let duration = try row.optionalWhole("duration_minutes"), extended = try row.optionalWhole("extended_minutes")
        let anonymous = try row.bool("anonymous"), latitude = try row.real("lat"), longitude = try row.real("lon")
        let label = try row.text("label"), createdAt = try row.time("created_at"), ballotsCast = try row.whole("ballots_cast")
        let completedAt = try row.optionalTime("completed_at"), closedAt = try row.optionalTime("closed_at")
        let cancelledAt = try row.optionalTime("cancelled_at"), nameConflict = try row.bool("name_conflict")
        let settling = try row.integer("settling_ms"), publishedAt = try row.optionalTime("published_at")
        let revision = try row.whole("revision")
        let settlingAnnounced = try row.bool("settling_announced"), finishAnnounced = try row.bool("finish_announced")
        self = try readingStored("vote \(id)") {
            StoredVote(
                vote: Vote(
                    id: voteID, initiator: initiator, subject: try VoteSubject(subject), options: try VoteOptions(options),
                    participants: try ParticipantCount(participants), duration: try VoteDuration(storedMinutes: duration),
                    visibility: visibility, anonymous: anonymous, verifiedOnly: verifiedOnly,
                    location: try Coordinate(latitude: latitude, longitude: longitude), label: label, createdAt: createdAt,
                    settlingTime: .milliseconds(settling), ballotsCast: ballotsCast, completedAt: completedAt,
                    extendedBy: try extended.map { try VoteDuration(storedMinutes: $0) }, closedAt: closedAt,
                    cancelledAt: cancelledAt, nameConflict: nameConflict, publishedAt: publishedAt, revision: revision),
                passwordHash: PasswordHash(encoded: hash), settlingAnnounced: settlingAnnounced, finishAnnounced: finishAnnounced)
        }
    }
}

extension Ballot: SQLRecord {
    public static let schema = RecordSchema<Ballot>(
        "ballot", key: ["id"],
        fields: [
            SQLField("id", .text) { .text($0.id.rawValue) },
            SQLField("vote_id", .text) { .text($0.vote.rawValue) },
            SQLField("voter_id", .text) { .optionalText($0.voter?.rawValue) },
            SQLField("voter_name", .text) { .optionalText($0.voterName) },
            SQLField("name_key", .text, .rule(version: NameMatch.ruleVersion)) { .optionalText($0.nameKey) },
            SQLField("option_index", .integer) { .whole($0.option) },
            SQLField("cast_at", .integer) { .time($0.castAt) },
            SQLField("counted", .boolean) { .bool($0.counted) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("id"), vote = try row.text("vote_id")
        guard let voteID = VoteID(vote), voteID.rawValue == vote else { throw .corrupt("ballot \(id) names the malformed vote \(vote)") }
        self.init(
            id: try BallotID.stored(id), vote: voteID,
            voter: try row.optionalText("voter_id").map { text throws(StoreError) in try UserID.stored(text) },
            voterName: try row.optionalText("voter_name"), option: try row.whole("option_index"), castAt: try row.time("cast_at"),
            counted: try row.bool("counted"))
    }
}
