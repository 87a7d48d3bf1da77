import Foundation
import Logging

/// A checked copy of a store file, made while a server serves it and writes to it: one snapshot copied in steps
/// (`SnapshotCopy`) into a file beside the target, checked (`StoreFileCheck`), and only then given the target's
/// name (`FilePlacement`). A failed or interrupted backup removes its file and leaves the target as it was.
public struct OnlineBackup: Sendable {
    public let source: String
    public let target: String
    /// Whether an existing target may be replaced; it is refused otherwise.
    public let replacing: Bool

    /// What a backup made, and how long its two halves took.
    public struct Outcome: Sendable {
        public let copy: SnapshotCopy.Summary
        public let report: StoreFileCheck.Report
        public let copying: Duration
        public let checking: Duration
    }

    public init(source: String, target: String, replacing: Bool) throws(BackupProblem) {
        if SameFile.names(source, target) { throw .sameFile(path: target) }
        self.source = source
        self.target = target
        self.replacing = replacing
    }

    /// Makes the backup. `progress` hears copied and total pages after each step; `stopRequested` is asked
    /// between steps and before the file takes the target's name.
    public func run(
        logger: Logger, progress: ((_ copied: Int, _ total: Int) -> Void)? = nil, stopRequested: @escaping @Sendable () -> Bool = { false }
    ) async throws(BackupProblem) -> Outcome {
        try FilePlacement.checkTarget(target, replacing: replacing)
        let partial = FilePlacement.partialName(for: target)
        do throws(BackupProblem) {
            let started = ContinuousClock.now
            let copy = try SnapshotCopy.copy(from: source, to: partial, progress: progress, stopRequested: stopRequested)
            let copied = ContinuousClock.now
            let report = try await StoreFileCheck.check(partial, reportingAs: source, logger: logger, stopRequested: stopRequested)
            try SingleFile.fold(partial)
            let checked = ContinuousClock.now
            if stopRequested() { throw BackupProblem.interrupted }
            try FilePlacement.place(partial, at: target, replacing: replacing)
            return Outcome(copy: copy, report: report, copying: copied - started, checking: checked - copied)
        } catch {
            FilePlacement.discard(partial)
            throw error
        }
    }
}

/// Whether two paths name one file: the same path once `.`, `..` and symbolic links are resolved, or, when
/// both exist, the same inode (a hard link).
enum SameFile {
    static func names(_ one: String, _ other: String) -> Bool {
        let resolve = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
        if resolve(one) == resolve(other) { return true }
        var first = stat(), second = stat()
        guard stat(one, &first) == 0, stat(other, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }
}
