import Foundation

/// The SASL mechanisms this client speaks in SMTP AUTH (RFC 4954). Both send the password as it is, which is
/// why the client sends them only over TLS or to this machine.
enum SMTPAuthentication: String, Hashable, Sendable {
    /// RFC 4616: one message carrying the user name and the password.
    case plain = "PLAIN"
    /// The user name and the password in two steps, each after a 334 challenge (draft-murchison-sasl-login);
    /// for relays that offer nothing else.
    case login = "LOGIN"

    /// PLAIN when the relay offers it, else LOGIN, else nil.
    static func choose(offered: [String]) -> SMTPAuthentication? {
        [.plain, .login].first { offered.contains($0.rawValue) }
    }

    /// RFC 4616 §2: `[authzid] NUL authcid NUL passwd`, with no authorisation identity, in base64 (RFC 4954 §4).
    static func plainResponse(_ credentials: SMTPCredentials) -> String {
        Data(("\u{0}" + credentials.username + "\u{0}" + credentials.password).utf8).base64EncodedString()
    }

    /// A LOGIN step's response: the text in base64.
    static func loginResponse(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
    }

    /// Every form in which the credentials' secret leaves this client, for the log and errors to withhold
    /// should a relay repeat one.
    static func secrets(of credentials: SMTPCredentials?) -> [String] {
        guard let credentials, !credentials.password.isEmpty else { return [] }
        return [credentials.password, plainResponse(credentials), loginResponse(credentials.password)]
    }
}
