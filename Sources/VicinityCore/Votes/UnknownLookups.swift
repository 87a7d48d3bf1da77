/// The limits on lookups of vote ids that name no vote, per person and per client address.
///
/// A lookup is checked after the store was read, in one step of the ledger that refuses a person past a limit
/// (a found vote too) or counts a miss against both limits at once: however many lookups run at once, each
/// step sees the misses counted before it, so no more misses are answered than the limits allow, and a vote
/// found by a person past them is not told. A found vote by a person without a miss in the window locks only
/// that person's key, which no one else's lookups wait for; misses, and lookups by people who have missed,
/// lock the address's key too.
///
/// An address that has used up its allowance stops only the people who have missed themselves: a person's
/// first lookup goes through (and counts, if it misses), so one person behind a campus NAT cannot lock
/// everyone else there out of voting, while every further probe costs a new account, of which an address
/// makes at most 100 an hour.
struct UnknownLookups<Ledger: WindowLedger>: Sendable {
    let perPerson: RateLimit
    let perAddress: RateLimit
    let clock: any WallClock
    let ledger: Ledger

    /// Refuses the lookup (`ServiceError.rateLimited`) or lets it be answered, counting it when it `missed`.
    func check(_ person: UserID, _ address: ClientAddress, missed: Bool) async throws {
        let (perPerson, perAddress) = (perPerson, perAddress)
        let now = clock.now
        let personKey = WindowKey(.voteLookups, person.rawValue, window: perPerson.window)
        let addressKey = WindowKey(.voteLookupsFromAddress, address.rawValue, window: perAddress.window)
        if !missed {
            // A found vote: a person who has not missed within the window passes whatever the address's count,
            // and nothing is counted, so only their own key is locked.
            let passed = try await ledger.withWindows([personKey], at: now) { states -> Result<Bool, ServiceError> in
                if let wait = states[0].wait(under: perPerson, at: now) { return .failure(.rateLimited(retryAfter: wait, .voteLookups)) }
                return .success(states[0].isClear)
            }
            if try passed.get() { return }
        }
        let refusal = try await ledger.withWindows([personKey, addressKey], at: now) { states -> ServiceError? in
            if let wait = states[0].wait(under: perPerson, at: now) { return .rateLimited(retryAfter: wait, .voteLookups) }
            if !states[0].isClear, let wait = states[1].wait(under: perAddress, at: now) {
                return .rateLimited(retryAfter: wait, .voteLookupsFromAddress)
            }
            if missed {
                states[0].add(at: now)
                states[1].add(at: now)
            }
            return nil
        }
        if let refusal { throw refusal }
    }
}
