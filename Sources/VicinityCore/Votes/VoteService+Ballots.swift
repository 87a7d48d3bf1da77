import GeoCore

extension VoteService {
    /// Why an account without a verified address may not vote in a vote that asks for one.
    public static var verifiedOnlyRefusal: String {
        "This vote takes ballots only from accounts with a verified e-mail address: confirm yours (POST /v1/me/email-verification) and vote again."
    }

    // MARK: Ballots

    /// Casts the caller's one ballot. The password is checked under the guessing guard, after everything that
    /// needs no password (so that a finished vote or a second ballot never costs a try) and before anything
    /// is written. A wrong password says how many tries are left; the one that locks the caller out says how
    /// long for. A lock ends when a timed vote does at the latest: a vote of 15 minutes never locks anyone out
    /// past its end, and after its end the vote's own refusal answers (it has ended), not the lock.
    public func castBallot(
        on id: VoteID, password text: String, option index: Int, by identity: Identity, from address: ClientAddress
    ) async throws -> BallotReceipt {
        let (vote, hash) = try await lookUp(id, by: identity, from: address) { try await stores.votes.voteForBallot(id: id) }
        switch vote.state(at: clock.now) {
        case .open: break
        case .cancelled: throw ServiceError.conflict(.voteCancelled)
        case .settling, .finished: throw ServiceError.conflict(.voteFinished)
        }
        var problems: [ValidationError] = []
        var option = 0
        var password: VotePassword?
        do throws(ValidationError) { option = try vote.options.option(index) } catch { problems.append(error) }
        do throws(ValidationError) { password = try VotePassword(text) } catch { problems.append(error) }
        guard problems.isEmpty, let password else { throw ServiceError.invalid(problems) }
        if try await stores.votes.ballot(of: id, by: identity.userID) != nil { throw ServiceError.conflict(.alreadyVoted) }
        // The voter's own account, as the record has it now (its name goes on the ballot; a vote may take verified
        // voters only), and the initiator's name for the receipt, as others see it (a front may hold it).
        guard let me = try await stores.accounts.account(id: identity.userID) else { throw ServiceError.unauthenticated }
        guard vote.verifiedOnly == false || me.isVerified else { throw ServiceError.forbidden(Self.verifiedOnlyRefusal) }
        let initiatorName = try await stores.accounts.accounts(ids: [vote.initiator].compactMap { $0 }).first?.displayName

        let key = id.rawValue + " " + identity.userID.rawValue
        await memo.settled(vote: id)
        let attempt = try await passwordGuard.begin(account: key, address: address.rawValue, lockEndingBy: vote.closesAt)
        let matches: Bool
        do { matches = try await passwordMatches(password, vote: id, hash: hash) } catch {
            try? await passwordGuard.abandoned(attempt)
            throw error
        }
        guard matches else {
            let failure = try await passwordGuard.failed(attempt, lockEndingBy: vote.closesAt)
            if let lock = failure.lock { throw lock }
            if failure.delay > .zero { try await clock.sleep(for: failure.delay) }
            throw ServiceError.wrongVotePassword(triesLeft: failure.triesLeft)
        }
        try await passwordGuard.succeeded(attempt)

        let ballot = Ballot(
            id: .random(), vote: id, voter: identity.userID, voterName: me.displayName, option: option,
            castAt: clock.now)
        switch try await stores.votes.castBallot(ballot, answering: vote.question) {
        case .noSuchVote: throw ServiceError.notFound(.vote)
        case .finished: throw ServiceError.conflict(.voteFinished)
        case .questionChanged: throw ServiceError.conflict(.questionChanged)
        case .alreadyVoted: throw ServiceError.conflict(.alreadyVoted)
        case .cast(let after):
            if after.completedAt != nil {
                try await announceFinishes()
            } else if let initiator = after.initiator, initiator != identity.userID {
                // After the ballot commits, and only a notice: the ballot stands whether or not it is recorded (a
                // failure here must not answer the voter with an error for a ballot cast), and the page reads the
                // vote again at its next look.
                _ = try? await events.record([.voteProgress(to: initiator, vote: after, at: clock.now)])
            }
            return BallotReceipt(ballot: ballot, view: VoteView(vote: after, initiatorName: initiatorName, state: after.state(at: clock.now)))
        }
    }

    /// The result of a finished vote, with the caller's own ballot; before the finish, `voteNotFinished` with
    /// how far it has got, or `voteSettling` with when it comes at the latest. Only the initiator and those who
    /// voted see it, for public and private votes alike.
    public func result(of id: VoteID, for identity: Identity, from address: ClientAddress) async throws -> VoteResult {
        let vote = try await lookUp(id, by: identity, from: address) { try await stores.votes.vote(id: id) }
        let voted = vote.initiator == identity.userID ? true : try await stores.votes.ballot(of: id, by: identity.userID) != nil
        guard voted else { throw ServiceError.forbidden("Only the initiator of this vote and those who voted in it see its result.") }
        switch vote.state(at: clock.now) {
        case .open:
            throw ServiceError.conflict(.voteNotFinished(ballotsCast: vote.ballotsCast, participants: vote.participants.value))
        case .settling(_, _, let until): throw ServiceError.conflict(.voteSettling(until: until))
        case .cancelled: throw ServiceError.conflict(.voteCancelled)
        case .finished: break
        }
        return VoteResult(vote: try await view(vote), ballots: try await stores.votes.ballots(of: id), for: identity.userID)
    }
}
