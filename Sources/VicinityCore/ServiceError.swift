/// Why a service refused a request, in the domain's terms. The HTTP front maps each case to a status in one
/// place; the messages are written for the person using the app and never say more than the caller may know
/// (a hidden position and no position read the same).
public enum ServiceError: Error, Hashable, Sendable {
    /// Input that breaks a rule, every bad field named.
    case invalid([ValidationError])
    /// No valid session: the token is missing, unknown, expired or revoked.
    case unauthenticated
    /// The credentials given do not sign in.
    case wrongCredentials
    /// Signed in, but this action is not the caller's to take.
    case forbidden(String)
    /// Nothing the caller may see has this id.
    case notFound(Missing)
    /// The request clashes with the current state.
    case conflict(Conflict)
    /// A limit was reached; the caller may try again after `retryAfter`.
    case rateLimited(retryAfter: Duration, Limit)

    public enum Missing: Hashable, Sendable {
        case user
        case friend
        case friendRequest
        /// A friend's position the caller may not see, or that does not exist: the two read the same.
        case friendPosition
        /// The caller shares no position.
        case ownPosition
        case vote
        case ballot
    }

    public enum Conflict: Hashable, Sendable {
        case usernameTaken
        case alreadyFriends
        case alreadyRequested
        /// The caller's own current position is needed (for distances) and there is none.
        case noCurrentPosition
        /// The vote takes no more ballots: every participant has voted or its time is up.
        case voteFinished
        case alreadyVoted
        /// The result is asked for while the vote is open; the counts say how far it has got.
        case voteNotFinished(ballotsCast: Int, participants: Int)
        /// A finished vote's ballots can no longer be voided or restored: a change of a published tally
        /// would tell what the changed ballot chose.
        case resultFinal
        /// An anonymous vote shows no names, so no two of its voters can be confused by name.
        case anonymousVote
        /// Ballots are voided or restored only while a vote settles its name conflicts, never while it is open.
        case voteOpen
        /// Only ballots that share their voter's name with another ballot are voided or restored.
        case notInNameConflict
        /// One ballot of each name stays counted.
        case lastCountedOfName
    }

    public enum Limit: Hashable, Sendable {
        case signInAttempts
        case signInsFromAddress
        case signUpsFromAddress
        case pokes
        case votePasswordAttempts
        case votePasswordsFromAddress
        case voteCreations
        /// Lookups of vote ids that name no vote, by one person.
        case voteLookups
        /// Lookups of vote ids that name no vote, from one client address.
        case voteLookupsFromAddress
    }

    /// One field's problem, for input rules that reject a single value.
    public static func invalid(_ field: String, _ message: String) -> ServiceError {
        .invalid([ValidationError(field: field, message: message)])
    }

    /// What to tell the caller.
    public var message: String {
        switch self {
        case .invalid(let errors): "Invalid request: " + errors.map(\.field).uniqued().joined(separator: ", ") + "."
        case .unauthenticated: "Sign in first: this needs a valid bearer token from POST /v1/sessions."
        case .wrongCredentials: "The username or password is wrong."
        case .forbidden(let reason): reason
        case .notFound(let missing):
            switch missing {
            case .user: "No user has this id."
            case .friend: "No friend of yours has this id."
            case .friendRequest: "No friend request of yours has this id."
            case .friendPosition: "No position of this friend is available to you."
            case .ownPosition: "You are not sharing a position."
            case .vote: "No vote has this id."
            case .ballot: "No ballot of this vote has this id."
            }
        case .conflict(let conflict):
            switch conflict {
            case .usernameTaken: "This username is taken."
            case .alreadyFriends: "You are already friends."
            case .alreadyRequested: "A friend request to this user is already pending."
            case .noCurrentPosition:
                "Your current position is not known: share it with PUT /v1/me/position, or pass lat and lon."
            case .voteFinished: "This vote is finished and takes no more ballots."
            case .alreadyVoted: "You have already voted in this vote; a ballot cannot be changed or cast twice."
            case .voteNotFinished(let cast, let participants):
                "This vote is not finished yet: \(cast) of \(participants) ballots cast. The result is shown when every participant has voted or the time is up."
            case .resultFinal:
                "This vote is finished and its result is final: changing a counted ballot now would reveal what it chose."
            case .anonymousVote: "This vote is anonymous: it shows no names, so it has no name conflicts."
            case .voteOpen:
                "Ballots are voided or restored only while the vote settles its name conflicts, after it ends: while it is open, voiding could single out one person's choice."
            case .notInNameConflict: "This ballot's voter shares their name with no other voter of this vote; it stays as cast."
            case .lastCountedOfName: "This is the last counted ballot under its name; one ballot of each name stays counted."
            }
        case .rateLimited(let retryAfter, let limit):
            switch limit {
            case .signInAttempts:
                "Too many failed sign-ins for this account; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .signInsFromAddress:
                "Too many failed sign-ins from this address; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .signUpsFromAddress:
                "Too many sign-ups from this address; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .pokes: "You have poked this friend enough for now; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .votePasswordAttempts:
                "Too many wrong passwords for this vote; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .votePasswordsFromAddress:
                "Too many wrong vote passwords from this address; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .voteCreations: "You have opened enough votes for now; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .voteLookups:
                "You have asked for too many vote ids that name no vote; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .voteLookupsFromAddress:
                "Too many vote ids that name no vote were asked for from this address; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            }
        }
    }
}
