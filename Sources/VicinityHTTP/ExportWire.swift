import GeoCore
import VicinityCore

/// The wire form of a person's export: everything the service holds about them, in the forms the API gives
/// each part.
extension Wire {
    static func export(_ export: AccountExport, alerts: [AlertView], watchers: [WatcherView]) -> JSONValue {
        .object([
            "exported_at": .string(export.at.rfc3339),
            "account": account(export.account),
            "position": export.position.map { position in
                var fields = ownPosition(position, presence: .current)
                fields["presence"] = nil  // where they were when they last shared, whatever its age
                return .object(fields)
            } ?? .null,
            "friends": .array(export.friends.map { friendship, person in
                var fields = summaryFields(person)
                fields["since"] = .string(friendship.since.rfc3339)
                fields["share"] = .string(friendship.shareWithFriend.rawValue)
                fields["share_until"] = friendship.shareWithFriendUntil.map { .string($0.rfc3339) } ?? .null
                fields["sharing_my_position"] = .bool(friendship.shareWithFriend != .none)
                return .object(fields)
            }),
            "friend_requests": .array(export.requests.map { .object(friendRequest($0, state: "pending")) }),
            "blocks": .array(export.blocks.map(block)),
            "alerts": .array(alerts.map { alert($0, person: "friend") }),
            "watchers": .array(watchers.map(watcher)),
            "devices": .array(export.devices.map(device)),
            "push_subscriptions": .array(export.pushDevices.map(pushDevice)),
            "push_preferences": pushPreferences(export.pushPreferences),
            "votes_started": .array(export.votesStarted.map { vote in
                .object(self.vote(VoteView(vote: vote, initiatorName: export.account.summary.displayName, state: vote.state(at: export.at))))
            }),
            "ballots": .array(export.ballots.map { ballot, vote in
                var fields: [String: JSONValue] = [
                    "vote_id": .string(vote.id.rawValue), "subject": .string(vote.subject.rawValue),
                    "option_text": vote.options.texts.indices.contains(ballot.option) ? .string(vote.options.texts[ballot.option]) : .null,
                ]
                if case .object(let own) = ownBallot(ballot) { fields.merge(own) { _, new in new } }
                return .object(fields)
            }),
            "events": .array(export.events.map(event)),
        ])
    }
}
