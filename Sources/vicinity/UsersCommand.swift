import ArgumentParser
import Foundation
import GeoCore
import VicinityBcrypt
import VicinityCore
import VicinityHTTP
import VicinitySQL

/// `vicinity users`: what an operator does for people who cannot, or must not: find an account, disable it,
/// enable it again, delete it. Each goes through `AccountService`, so the rules are the ones the HTTP front
/// keeps: disabling ends every session, deleting removes the account and everything about it.
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, show, disable, enable or delete accounts.",
        subcommands: [List.self, Show.self, Disable.self, Enable.self, Delete.self]
    )

    /// Exit status for a username, address or id no account has: EX_NOUSER from sysexits(3).
    static let noUser = ExitCode(67)

    /// Who the operator means: a username, an address (verified or waiting), or an account id.
    struct Target: ParsableArguments {
        @Argument(help: "A username, an e-mail address (verified or waiting for its code), or an account id.")
        var account: String

        /// The account, or exits with `noUser` saying so.
        func find<Record: RecordStore>(in record: Record) async throws -> Account {
            if let id = UserID(account), let found = try await record.account(id: id) { return found }
            let key = account.lowercased()
            if let found = try await record.credentials(usernameKey: key) { return found.account }
            if account.contains("@") {
                if let found = try await record.credentials(emailKey: key) { return found.account }
                // An address still waiting for its code is no sign-in key, but the operator may know only it.
                let waiting = try await record.run(.select(StoredAccount.self, where: .notNull("pending_email")) { .done($0) }, access: .read)
                if let found = waiting.first(where: { $0.account.pendingEmail?.key == key }) { return found.account }
            }
            Console.error("vicinity: no account has the username, address or id \(account) in \(record.location)")
            throw Users.noUser
        }
    }

    /// The account service over the record. Operators' commands check no password, so the hasher's cost
    /// never matters here.
    static func accounts<Record: RecordStore>(_ record: Record) -> AccountService<Record> {
        Services(stores: record, hasher: BcryptHasher()).accounts
    }

    static func setDisabled<Record: RecordStore>(_ disabled: Bool, _ account: Account, in record: Record) async throws {
        guard try await accounts(record).setDisabled(disabled, account: account.id) != nil else { throw noUser }
    }

    static func delete<Record: RecordStore>(_ account: Account, in record: Record) async throws {
        guard try await accounts(record).deleteAccount(account.id) else { throw noUser }
    }

    static func print(_ accounts: [Account], json: Bool) {
        if json {
            Output.printJSON(JSONValue.array(accounts.map(Wire.operatorView)).jsonBytes)
            return
        }
        Output.printTable(
            header: ["username", "name", "email", "state", "created", "id"],
            rows: accounts.map { account in
                [account.username.rawValue, "\(account.firstName) \(account.lastName)",
                 account.email.map { "\($0) (verified)" } ?? account.pendingEmail.map { "\($0) (waiting)" } ?? "-",
                 account.disabled ? "disabled" : "active", account.createdAt.rfc3339, account.id.rawValue]
            })
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List accounts by username; --match keeps those whose username starts with, or name holds, the text.")

        @Option(help: "Only accounts whose username starts with this text, or whose name holds it (any case).")
        var match: String?

        @OptionGroup var output: OutputOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let accounts = try await database.withStore { record in
                if let match { return try await record.accountsMatching(match.lowercased()) }
                return try await record.run(.select(StoredAccount.self) { .done($0.map(\.account)) }, access: .read)
            }
            Users.print(accounts.sorted { $0.username.key < $1.username.key }, json: output.json)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one account.")

        @OptionGroup var target: Target
        @OptionGroup var output: OutputOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let account = try await database.withStore { try await target.find(in: $0) }
            Users.print([account], json: output.json)
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable an account: it cannot sign in, and every session it has ends now.",
            discussion: """
                Its data stay, and `vicinity users enable` undoes this. A front that is serving refuses the ended \
                sessions on their next request; an event stream open on one ends when that front next checks it.
                """)

        @OptionGroup var target: Target
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try await database.withStore { record in
                let account = try await target.find(in: record)
                try await Users.setDisabled(true, account, in: record)
                Swift.print("disabled \(account.username) (\(account.id)); their sessions ended")
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable an account disabled before: it can sign in again.")

        @OptionGroup var target: Target
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try await database.withStore { record in
                let account = try await target.find(in: record)
                try await Users.setDisabled(false, account, in: record)
                Swift.print("enabled \(account.username) (\(account.id))")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an account and everything about it, as the person could themselves.",
            discussion: """
                In one transaction: the account, its sessions, codes, position, friendships, requests, events \
                about it and its mail not yet sent go; votes it opened that are still open are called off; \
                ballots it cast in other votes stay counted, naming nobody. There is no undo: give --yes.
                """)

        @OptionGroup var target: Target

        @Flag(help: "Confirm: the account cannot be brought back.")
        var yes = false

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try await database.withStore { record in
                let account = try await target.find(in: record)
                guard yes else {
                    Console.error("vicinity: this deletes \(account.username) (\(account.id)) for good; give --yes to go ahead")
                    throw ExitCode.failure
                }
                try await Users.delete(account, in: record)
                Swift.print("deleted \(account.username) (\(account.id)) and everything about them")
            }
        }
    }
}
