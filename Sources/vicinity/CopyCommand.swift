import ArgumentParser
import Foundation
import Logging
import VicinityCore
import VicinityRecord
import VicinitySQL

/// `vicinity copy`: moves a whole record from one store to another, a SpatiaLite file to PostgreSQL or back.
struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy everything from one database to another: places, campuses, accounts, sessions, positions, friendships, requests, events, votes and ballots.",
        discussion: """
            Each of FROM and TO is a SpatiaLite file or a postgres:// URL. Rows keep their ids, password hashes, \
            token digests and event numbers, so people sign in with their old passwords afterwards and their tokens \
            still work. The copy is one transaction on TO: all of it or nothing. Afterwards each table's row count \
            and checksum is compared between the two; a difference fails the command (status 1). TO must be empty \
            unless --replace is given. Stop the servers writing to FROM first: writes made during the copy are not \
            in it.
            """
    )

    @Option(help: ArgumentHelp("The database to copy from.", valueName: "path-or-url"))
    var from: String

    @Option(help: ArgumentHelp("The database to copy into, created when missing.", valueName: "path-or-url"))
    var to: String

    @Flag(help: "Replace what TO holds instead of refusing a database that is not empty.")
    var replace = false

    func validate() throws {
        _ = try DatabaseOptions.location(from, option: "--from")
        _ = try DatabaseOptions.location(to, option: "--to")
        if from == to { throw ValidationError("--from and --to name the same database") }
    }

    func run() async throws {
        let logger = Logger(label: "vicinity")
        let started = ContinuousClock.now
        let (contents, source) = try await DatabaseOptions.location(from, option: "--from").withRecord(logger: logger) { store in
            (try await store.contents(), store.location)
        }
        let read = ContinuousClock.now - started
        let (copied, target) = try await DatabaseOptions.location(to, option: "--to").withRecord(logger: logger) { store in
            if !replace, !(try await store.isEmpty()) {
                Console.error("vicinity: \(store.location) is not empty, nothing copied; give --replace to replace what it holds")
                throw ExitCode.failure
            }
            try await store.replaceContents(with: contents)
            return (try await store.contents(), store.location)
        }
        let elapsed = ContinuousClock.now - started
        let expected = contents.tableChecksums, found = copied.tableChecksums
        var differences = 0
        print("copied \(source) into \(target):")
        for (want, got) in zip(expected, found) {
            let same = want.rows == got.rows && want.sha256 == got.sha256
            if !same { differences += 1 }
            print("  \(want.table.padding(toLength: 16, withPad: " ", startingAt: 0)) \(String(got.rows).leftPadded(9)) rows  sha256 \(got.sha256.prefix(16))  \(same ? "same" : "DIFFERENT: the source has \(want.rows) rows, sha256 \(want.sha256.prefix(16))")")
        }
        let sameNumbering = copied.nextEventNumber == contents.nextEventNumber
        if !sameNumbering { differences += 1 }
        print("  next event number \(copied.nextEventNumber)  \(sameNumbering ? "same" : "DIFFERENT: the source's is \(contents.nextEventNumber)")")
        let seconds = { (duration: Duration) in String(format: "%.2f s", duration.milliseconds / 1000) }
        print("in \(seconds(elapsed)) (reading \(seconds(read)), writing and checking \(seconds(elapsed - read)))")
        if differences > 0 {
            Console.error("vicinity: \(differences) table(s) or the event numbering differ after the copy")
            throw ExitCode.failure
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
