import GeoCore
import Hummingbird
import Metrics
import VicinityCore

/// Signing up, in and out, and one's own account.
struct AccountRoutes<S: Stores>: RouteGroup {
    let accounts: AccountService<S>
    let options: HTTPOptions

    func register(in table: inout RouteTable) {
        table.add(.post, "/v1/users", .anyone) { request, context in try await signUp(request, context: context) }
        table.add(.post, "/v1/sessions", .anyone) { request, context in try await signIn(request, context: context) }
        table.add(.delete, "/v1/sessions/current", .signedIn) { request, context in try await signOut(request, context: context) }
        table.add(.get, "/v1/me", .signedIn) { request, context in try await me(request, context: context) }
        table.add(.patch, "/v1/me", .signedIn) { request, context in try await updateMe(request, context: context) }
    }

    func signUp(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let username = body.string("username", as: Username.init)
        let password = body.string("password") { try Password($0) }
        let firstName = body.string("first_name") { try PersonName($0, field: "first_name") }
        let lastName = body.string("last_name") { try PersonName($0, field: "last_name") }
        let email = body.string("email", required: false, as: Email.init)
        try body.finish()
        let account = try await accounts.signUp(
            SignUp(
                username: try body.checked(username), password: try body.checked(password),
                firstName: try body.checked(firstName), lastName: try body.checked(lastName), email: email),
            from: context.address)
        Counter(label: "vicinity_sign_ups_total").increment()
        return WireEncoding.response(json: Wire.account(account), status: .created)
    }

    /// 201 with the token; 401 for a wrong username or password alike; 429 while locked out.
    func signIn(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let username = body.string("username")
        let password = body.string("password")
        try body.finish()
        let signedIn: SignedIn
        do {
            signedIn = try await accounts.signIn(
                username: try body.checked(username), password: try body.checked(password), from: context.address)
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

    func signOut(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        try await accounts.signOut(try context.signedIn())
        return Response(status: .noContent)
    }

    func me(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        return WireEncoding.response(json: Wire.account(try await accounts.me(try context.signedIn())))
    }

    /// Names, e-mail (null removes it), privacy mode, and a new password with the current one. Null for any
    /// other member is refused: in a change it would otherwise read as "leave it" where the client meant a value.
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
        changes.newPassword = body.string("password", required: false, null: .refused) { try Password($0) }
        changes.currentPassword = body.string("current_password", required: false, null: .refused)
        try body.finish()
        let account = try await accounts.update(try context.signedIn(), changes, from: context.address)
        return WireEncoding.response(json: Wire.account(account))
    }
}
