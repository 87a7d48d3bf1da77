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
    /// The vote's password is wrong, and the caller may give `triesLeft` more wrong ones before they are
    /// locked out of the vote: their own count at that vote, which tells them nothing they did not do.
    case wrongVotePassword(triesLeft: Int)
    /// Nothing the caller may see has this id.
    case notFound(Missing)
    /// The request clashes with the current state.
    case conflict(Conflict)
    /// A limit was reached; the caller may try again after `retryAfter`.
    case rateLimited(retryAfter: Duration, Limit)
    /// This needs mail, and no relay is configured (`serve --smtp-url`).
    case mailUnavailable
    /// A phone app's credentials name no device: a wrong secret, a removed device and one that never existed
    /// read the same.
    case deviceUnauthorized
    /// A device of a kind this server sends no pushes to (no VAPID key, no APNs key configured).
    case pushUnavailable(PushKind)

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
        case device
        case pushDevice
        /// A block of the caller's on this user.
        case block
        /// The VAPID key browsers subscribe with: none without Web Push.
        case applicationServerKey
        case alert
        /// An alert's place or campus.
        case alertPlace
        /// A permission to set place alerts that the caller gave.
        case watchPermission
    }

    public enum Conflict: Hashable, Sendable {
        case usernameTaken
        /// Another account has verified this address.
        case emailTaken
        /// A code to confirm an address was asked for, and no address waits for one.
        case noEmailToVerify
        case alreadyFriends
        case alreadyRequested
        /// The caller blocked the person they ask to be friends.
        case blockedByYou
        /// The caller's own current position is needed (for distances) and there is none.
        case noCurrentPosition
        /// Voting has ended (every participant has voted, its time is up or its initiator closed it): no more
        /// ballots, and nothing an initiator changes while it is open.
        case voteFinished
        case alreadyVoted
        /// The result is asked for while the vote is open; the counts say how far it has got.
        case voteNotFinished(ballotsCast: Int, participants: Int)
        /// The result is asked for while the initiator settles name conflicts; it comes by `until` at the latest.
        case voteSettling(until: Timestamp)
        /// A vote whose result is out is final: its ballots can no longer be voided or restored (a change of a
        /// published tally would tell what the changed ballot chose), nor can it be called off or published again.
        case resultFinal
        /// An anonymous vote shows no names, so no two of its voters can be confused by name.
        case anonymousVote
        /// Ballots are voided or restored, and a result published, only while a vote settles its name conflicts,
        /// never while it is open.
        case voteOpen
        /// The initiator called the vote off.
        case voteCancelled
        /// The vote's subject or options changed after the ballot's option was read against them.
        case questionChanged
        /// A permanent vote has no closing time to extend.
        case permanentVote
        /// A timed vote is extended once.
        case alreadyExtended
        /// What a vote asks is changed only before anyone has answered it.
        case ballotsAlreadyCast
        /// Only ballots that share their voter's name with another ballot are voided or restored.
        case notInNameConflict
        /// One ballot of each name stays counted.
        case lastCountedOfName
        /// A person holds `DeviceRules.maximumPerPerson` device passwords at most.
        case tooManyDevices(limit: Int)
        /// A person registers `PushRules.maximumPerPerson` devices for push at most.
        case tooManyPushDevices(limit: Int)
        /// A place alert on a friend who has not allowed the caller.
        case notAllowedToWatch
        case tooManyAlerts(limit: Int)
    }

    public enum Limit: Hashable, Sendable {
        case signInAttempts
        case signInsFromAddress
        case signUpsFromAddress
        case pokes
        /// Friend requests from one person to another: how asking again after a decline is limited.
        case friendRequests
        /// Other tries of the same password are being checked and could use up the tries left: not a lock.
        case checksUnderWay
        case votePasswordAttempts
        /// Locked out of a vote for the rest of its time: the lock ends when the vote does.
        case votePasswordAttemptsUntilVoteEnds
        case votePasswordsFromAddress
        case voteCreations
        /// Lookups of vote ids that name no vote, by one person.
        case voteLookups
        /// Lookups of vote ids that name no vote, from one client address.
        case voteLookupsFromAddress
        case codesForAccount
        case codesToAddress
        case codesFromClient
        /// Positions reported by one device.
        case deviceReports
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
        case .wrongVotePassword(let triesLeft):
            "The password of this vote is wrong: \(triesLeft) \(triesLeft == 1 ? "try" : "tries") left."
        case .notFound(let missing):
            switch missing {
            case .user: "No user has this id."
            case .friend: "No friend of yours has this id."
            case .friendRequest: "No friend request of yours has this id."
            case .friendPosition: "No position of this friend is available to you."
            case .ownPosition: "You are not sharing a position."
            case .vote: "No vote has this id."
            case .ballot: "No ballot of this vote has this id."
            case .device: "No device of yours has this id."
            case .pushDevice: "No device of yours registered for notifications has this id."
            case .block: "You have not blocked this user."
            case .alert: "No alert of yours has this id."
            case .alertPlace: "No place or campus has this id."
            case .watchPermission: "You have not allowed this friend to set place alerts on you."
            case .applicationServerKey:
                "This service sends no Web Push notifications: its operator has configured no VAPID key (vicinity serve --vapid-key)."
            }
        case .conflict(let conflict):
            switch conflict {
            case .usernameTaken: "This username is taken."
            case .emailTaken: "Another account has verified this e-mail address."
            case .noEmailToVerify: "No e-mail address of yours waits for a code: give one first (PATCH /v1/me with email)."
            case .alreadyFriends: "You are already friends."
            case .alreadyRequested: "A friend request to this user is already pending."
            case .blockedByYou: "You have blocked this user: unblock them first (DELETE /v1/blocks/{id})."
            case .noCurrentPosition:
                "Your current position is not known: share it with PUT /v1/me/position, or pass lat and lon."
            case .voteFinished: "Voting in this vote has ended: it takes no more ballots, and its question and time no longer change."
            case .alreadyVoted: "You have already voted in this vote; a ballot cannot be changed or cast twice."
            case .voteNotFinished(let cast, let participants):
                "This vote is not finished yet: \(cast) of \(participants) ballots cast. The result is shown when every participant has voted or the time is up."
            case .voteSettling(let until):
                "This vote has ended and its initiator is settling ballots cast under the same name; the result is published by \(until.rfc3339) at the latest."
            case .resultFinal:
                "This vote's result is out and final: its ballots cannot be voided or restored (that would reveal what they chose), and it cannot be called off or published again."
            case .anonymousVote: "This vote is anonymous: it shows no names, so it has no name conflicts."
            case .voteOpen:
                "This vote is still open. Ballots are voided or restored, and the result published, only while it settles its name conflicts after it ends: while it is open, voiding could single out one person's choice."
            case .voteCancelled: "This vote was called off by its initiator; it takes no ballots and has no result."
            case .questionChanged:
                "This vote's subject or options changed while your ballot was on its way; read the vote again and choose again."
            case .permanentVote: "This vote is permanent: it has no closing time to extend. Close it instead."
            case .alreadyExtended: "This vote was extended once already; a vote is extended only once."
            case .ballotsAlreadyCast:
                "Someone has voted in this vote already: its subject and options no longer change, so every ballot answers the same question."
            case .notInNameConflict: "This ballot's voter shares their name with no other voter of this vote; it stays as cast."
            case .lastCountedOfName: "This is the last counted ballot under its name; one ballot of each name stays counted."
            case .tooManyDevices(let limit):
                "You have \(limit) devices, the most one person may have: remove one you no longer use first."
            case .tooManyPushDevices(let limit):
                "You have \(limit) devices registered for notifications, the most one person may have: remove one you no longer use first."
            case .notAllowedToWatch:
                "This friend has not allowed you to set place alerts on them; they can allow you from their list of friends."
            case .tooManyAlerts(let limit):
                "You have \(limit) alerts on this friend, the most one person may set on one friend: remove one first."
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
            case .checksUnderWay:
                "Other tries of this password are being checked; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .friendRequests:
                "You have asked this person to be friends enough for now; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .votePasswordAttempts:
                "Too many wrong passwords for this vote; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .votePasswordAttemptsUntilVoteEnds:
                "Too many wrong passwords for this vote: you have no tries left before it ends, in \(retryAfter.wholeSecondsRoundedUp) s."
            case .votePasswordsFromAddress:
                "Too many wrong vote passwords from this address; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .voteCreations: "You have opened enough votes for now; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .voteLookups:
                "You have asked for too many vote ids that name no vote; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .voteLookupsFromAddress:
                "Too many vote ids that name no vote were asked for from this address; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .codesForAccount:
                "Enough codes have been mailed for this account for now; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .codesToAddress:
                "Enough codes have been mailed to this address for now; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .codesFromClient:
                "Enough codes have been asked for from this address for now; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            case .deviceReports:
                "This device has sent positions faster than any app does; try again in \(retryAfter.wholeSecondsRoundedUp) s."
            }
        case .mailUnavailable:
            "This service cannot send mail: its operator has configured no mail relay (vicinity serve --smtp-url)."
        case .deviceUnauthorized:
            "This device's credentials are not valid: check the username and password the app was given, or add the device again."
        case .pushUnavailable(.webPush):
            "This service sends no Web Push notifications: its operator has configured no VAPID key (vicinity serve --vapid-key)."
        case .pushUnavailable(.apns):
            "This service sends no notifications to iOS devices: its operator has configured no APNs key (vicinity serve --apns-key)."
        }
    }
}
