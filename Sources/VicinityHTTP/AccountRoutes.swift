import GeoCore
import Hummingbird
import Metrics
import VicinityCore

/// Signing up, in and out; one's own account, its addresses, its password, its deletion and its export.
struct AccountRoutes<S: Stores>: RouteGroup {
    let accounts: AccountService<S>
    /// For the export: the alerts one set, and who may set them on one.
    let alerts: AlertService<S>
    let options: HTTPOptions

    func register(in table: inout RouteTable) {
        table.add(.post, "/v1/users", .anyone) { request, context in try await signUp(request, context: context) }
        table.add(.post, "/v1/sessions", .anyone) { request, context in try await signIn(request, context: context) }
        table.add(.post, "/v1/sign-in-codes", .anyone) { request, context in try await signInCode(request, context: context) }
        table.add(.delete, "/v1/sessions/current", .signedIn) { request, context in try await signOut(request, context: context) }
        table.add(.get, "/v1/me", .signedIn) { request, context in try await me(request, context: context) }
        table.add(.patch, "/v1/me", .signedIn) { request, context in try await updateMe(request, context: context) }
        table.add(.delete, "/v1/me", .signedIn) { request, context in try await deleteMe(request, context: context) }
        table.add(.put, "/v1/me/password", .signedIn) { request, context in try await setPassword(request, context: context) }
        table.add(.post, "/v1/me/email-verification", .signedIn) { request, context in
            try await requestVerification(request, context: context)
        }
        table.add(.post, "/v1/me/email-verification/confirm", .signedIn) { request, context in
            try await confirmVerification(request, context: context)
        }
        table.add(.get, "/v1/me/export", .signedIn) { request, context in try await export(request, context: context) }
    }

    /// 201 with the account. An account with an e-mail address gets a code to confirm it, mailed at once; one
    /// without a password (an address is then required) signs in with codes until it sets one.
    func signUp(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let username = body.string("username", as: Username.init)
        let password = body.string("password", required: false) { try Password($0) }
        let firstName = body.string("first_name") { try PersonName($0, field: "first_name") }
        let lastName = body.string("last_name") { try PersonName($0, field: "last_name") }
        let email = body.string("email", required: false, as: Email.init)
        try body.finish()
        let account = try await accounts.signUp(
            SignUp(
                username: try body.checked(username), password: password, firstName: try body.checked(firstName),
                lastName: try body.checked(lastName), email: email),
            from: context.address)
        Counter(label: "vicinity_sign_ups_total").increment()
        return WireEncoding.response(json: Wire.account(account), status: .created)
    }

    /// 201 with the token, for a username or a verified address with its password, or an address with a code
    /// mailed to it; 401 for any of them wrong alike; 429 while locked out.
    func signIn(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let username = body.string("username", required: false)
        let email = body.string("email", required: false)
        let password = body.string("password", required: false)
        let code = body.string("code", required: false)
        switch (username, email, password, code) {
        case (_?, nil, _?, nil), (nil, _?, _?, nil), (nil, _?, nil, _?): break
        case (_?, _?, _, _): body.reject("email", "goes without username: sign in with one or the other")
        case (nil, nil, _, _): body.reject("username", "is required, or email")
        case (_, _, _?, _?): body.reject("code", "goes without password: sign in with one or the other")
        case (_?, nil, nil, _): body.reject("password", "is required with username")
        case (nil, _?, nil, nil): body.reject("password", "is required with email, or code")
        }
        try body.finish()
        let signedIn: SignedIn
        do {
            if let text = code, let email {
                // An address or code that cannot be one is as wrong as any other, and says nothing more.
                guard let address = try? Email(email), let code = try? MailCode(text) else { throw ServiceError.wrongCredentials }
                signedIn = try await accounts.signIn(email: address, code: code, from: context.address)
            } else {
                signedIn = try await accounts.signIn(
                    login: try body.checked(username ?? email), password: try body.checked(password), from: context.address)
            }
        } catch let error as ServiceError {
            switch error {
            case .wrongCredentials: Counter(label: "vicinity_sign_ins_total", dimensions: [("outcome", "wrong_credentials")]).increment()
            case .rateLimited: Counter(label: "vicinity_sign_ins_total", dimensions: [("outcome", "rate_limited")]).increment()
            default: break
            }
            throw error
        }
        Counter(label: "vicinity_sign_ins_total", dimensions: [("outcome", "signed_in")]).increment()
        let fields: [String: JSONValue] = [
            "token": .string(signedIn.token.text),
            "expires_at": .string(signedIn.expiresAt.rfc3339),
            "user": Wire.account(signedIn.account),
        ]
        // A token must not linger in caches on the way.
        var response = WireEncoding.response(json: .object(fields), status: .created)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// 202 whether or not any account has verified the address: the answer, and how long it takes, tell
    /// nobody whose address it is.
    func signInCode(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let email = body.string("email", as: Email.init)
        try body.finish()
        try await accounts.requestSignInCode(to: try body.checked(email), from: context.address)
        return WireEncoding.response(json: Wire.codeRequested(lifetime: accounts.rules.codes.lifetime), status: .accepted)
    }

    func signOut(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        try await accounts.signOut(try context.signedIn())
        return Response(status: .noContent)
    }

    func me(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        return WireEncoding.response(json: Wire.account(try await accounts.me(try context.signedIn())))
    }

    /// Names, e-mail (a new address waits for the code mailed to it; null removes the addresses), privacy
    /// mode, and a new password with the current one. Null for any other member is refused: in a change it
    /// would otherwise read as "leave it" where the client meant a value.
    func updateMe(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        var changes = AccountChanges()
        changes.firstName = body.string("first_name", required: false, null: .refused) { try PersonName($0, field: "first_name") }
        changes.lastName = body.string("last_name", required: false, null: .refused) { try PersonName($0, field: "last_name") }
        switch body.nullableString("email") {
        case nil: break
        case .some(nil): changes.email = .some(nil)
        case .some(let text?):
            do { changes.email = .some(try Email(text)) } catch { body.reject("email", error.message) }
        }
        changes.privacyMode = body.bool("privacy_mode", required: false, null: .refused)
        changes.defaultShare = body.string("default_share", required: false, null: .refused) { try ShareLevel(wire: $0, field: "default_share") }
        changes.newPassword = body.string("password", required: false, null: .refused) { try Password($0) }
        changes.currentPassword = body.string("current_password", required: false, null: .refused)
        try body.finish()
        let account = try await accounts.update(try context.signedIn(), changes, from: context.address)
        return WireEncoding.response(json: Wire.account(account))
    }

    /// A new password, with the current one, or within minutes of signing in with a mailed code (the reset of
    /// a forgotten one). Every other session ends.
    func setPassword(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let password = body.string("password") { try Password($0) }
        let current = body.string("current_password", required: false)
        try body.finish()
        let account = try await accounts.setPassword(
            try body.checked(password), current: current, for: try context.signedIn(), from: context.address)
        return WireEncoding.response(json: Wire.account(account))
    }

    /// Deletes the caller's account and everything about them: with the password, or within minutes of
    /// signing in with a mailed code.
    func deleteMe(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var password: String?
        if request.headers[.contentLength].map({ $0 != "0" }) ?? (request.headers[.transferEncoding] != nil) {
            var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
            password = body.string("password", required: false)
            try body.finish()
        }
        try await accounts.deleteAccount(try context.signedIn(), password: password, from: context.address)
        Counter(label: "vicinity_accounts_deleted_total").increment()
        return Response(status: .noContent)
    }

    /// 202: a new code is on its way to the address waiting for confirmation.
    func requestVerification(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        try await accounts.requestEmailVerification(try context.signedIn(), from: context.address)
        return WireEncoding.response(json: Wire.codeRequested(lifetime: accounts.rules.codes.lifetime), status: .accepted)
    }

    func confirmVerification(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let code = body.string("code") { try MailCode($0) }
        try body.finish()
        let account = try await accounts.confirmEmail(try context.signedIn(), code: try body.checked(code), from: context.address)
        return WireEncoding.response(json: Wire.account(account))
    }

    /// Everything the service holds about the caller, as one JSON document to keep.
    func export(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let identity = try context.signedIn()
        let export = try await accounts.export(identity)
        var response = WireEncoding.response(
            json: Wire.export(export, alerts: try await alerts.alerts(of: identity), watchers: try await alerts.watchers(of: identity)))
        response.headers[.contentDisposition] = "attachment; filename=\"vicinity-export.json\""
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
