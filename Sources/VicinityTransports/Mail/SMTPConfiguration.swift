import Foundation

/// A user name and password for SMTP AUTH. The password is kept for the relay only: no description, debug
/// description or mirror of this value shows it.
public struct SMTPCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let username: String
    let password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    public var description: String { "\(username) (password withheld)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["username": username, "password": "<withheld>"]) }
}

/// Where and how mail is submitted, read from a `smtp://user@host:port` URL (`smtps://` for TLS from the first
/// octet). The password comes in the URL or separately (from an environment variable or a file the caller
/// reads); ``description``, what logs and start-up lines show, never holds it.
public struct SMTPConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A URL or a combination of settings this client cannot use, said in words.
    public struct Problem: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// When the connection is encrypted with STARTTLS (RFC 3207).
    public enum TLSPolicy: String, Hashable, Sendable, CaseIterable {
        /// Whenever the relay offers STARTTLS, with the certificate checked as for ``required``; plain when it
        /// offers none (then credentials go only to this machine).
        case opportunistic
        /// Encrypted or nothing: a relay without STARTTLS is a configuration error, a failed handshake a failure.
        case required
        /// Never, even when offered; credentials go in the clear. For relays on this machine or a trusted link.
        /// Named `disabled` rather than `none`, which an optional policy would read as nil; written `none`.
        case disabled = "none"
    }

    /// RFC 6409 §3.1: the message submission port.
    public static let submissionPort = 587
    /// RFC 8314 §3.3: submission over implicit TLS.
    public static let implicitTLSPort = 465

    public let host: String
    public let port: Int
    /// Whether TLS starts with the connection (`smtps://`) rather than after STARTTLS.
    public let implicitTLS: Bool
    public let tls: TLSPolicy
    public let credentials: SMTPCredentials?

    /// A PEM file of certificate authorities trusted besides the system's roots (a private relay's own CA).
    public var certificateAuthorityFile: String?
    /// The name this client gives in EHLO; nil for the address literal of its end of the connection, as
    /// RFC 5321 §4.1.4 asks of a client without a meaningful domain name. Set with ``setClientName(_:)``.
    public private(set) var clientName: String?
    /// How long connecting may take.
    public var connectTimeout: Duration = .seconds(10)
    /// How long each reply (and the TLS handshake) may take. RFC 5321 §4.5.3.2 gives a relay minutes, but
    /// the sender would rather retry a message later than hold it while a relay stalls.
    public var replyTimeout: Duration = .seconds(30)

    /// Reads the URL. `password` is the one given apart from the URL; giving one both ways is refused, as is
    /// a password without a user name or a user name without a password.
    ///
    /// - Parameter tls: nil for the scheme's own: opportunistic for `smtp://`, required for `smtps://`.
    public init(url text: String, password separatePassword: String? = nil, tls: TLSPolicy? = nil) throws(Problem) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "smtp" || scheme == "smtps"
        else {
            throw Problem(description: "a mail relay is given as smtp://user@host:port or smtps://user@host:port")
        }
        guard let host = components.host, !host.isEmpty else {
            throw Problem(description: "the mail relay URL names no host (smtp://user@HOST:port)")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil else {
            throw Problem(description: "the mail relay URL has only a user, a host and a port (smtp://user@host:port)")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw Problem(description: "the mail relay's port must be between 1 and 65535")
        }
        self.implicitTLS = scheme == "smtps"
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = components.port ?? (implicitTLS ? Self.implicitTLSPort : Self.submissionPort)

        let policy = tls ?? (implicitTLS ? .required : .opportunistic)
        if implicitTLS, policy != .required {
            throw Problem(description: "smtps:// is encrypted from the first octet: its TLS policy can only be required")
        }
        self.tls = policy

        let urlPassword = components.password.flatMap { $0.isEmpty ? nil : $0 }
        if urlPassword != nil, separatePassword != nil {
            throw Problem(description: "the mail relay's password is given twice (in the URL and separately): give it once")
        }
        let password = urlPassword ?? separatePassword
        switch (components.user.flatMap { $0.isEmpty ? nil : $0 }, password) {
        case (let username?, let password?):
            self.credentials = SMTPCredentials(username: username, password: password)
        case (nil, nil):
            self.credentials = nil
        case (nil, _?):
            throw Problem(description: "the mail relay has a password but no user name (smtp://USER@host:port)")
        case (let username?, nil):
            throw Problem(description: "the mail relay's user \(username) has no password: give it in the URL or separately")
        }
    }

    /// Names this client in EHLO: a domain name (RFC 5321 §4.1.1.1), such as the host's public name.
    public mutating func setClientName(_ name: String?) throws(Problem) {
        if let name, !MailAddress.isDomain(name) {
            throw Problem(description: "the name given in EHLO must be a domain name (letters, digits, hyphens and dots)")
        }
        clientName = name
    }

    /// The URL without its password: what may be shown.
    public var location: String {
        var components = URLComponents()
        components.scheme = implicitTLS ? "smtps" : "smtp"
        components.user = credentials?.username
        components.host = host.contains(":") ? "[\(host)]" : host
        components.port = port
        return components.string ?? "\(implicitTLS ? "smtps" : "smtp")://\(host):\(port)"
    }

    public var description: String {
        tls == (implicitTLS ? .required : .opportunistic) ? location : "\(location) (TLS \(tls.rawValue))"
    }

    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["location": location, "tls": tls]) }
}
