import Foundation
import Logging

/// `vicinity restore`: a backup checked and put in place of a store file, whole or not at all. The backup is
/// read, never written: it is copied beside the target (`SnapshotCopy`, which reads it read-only), the copy is
/// checked (`StoreFileCheck`) and made one file (`SingleFile`), then it replaces the target and the target's old
/// WAL files (`FilePlacement`).
public struct StoreRestore: Sendable {
    public let backup: String
    public let target: String
    /// Whether to restore although another process has the target open; refused otherwise.
    public let evenIfOpen: Bool

    public struct Outcome: Sendable {
        public let copy: SnapshotCopy.Summary
        public let report: StoreFileCheck.Report
        public let replaced: Bool
    }

    public init(backup: String, target: String, evenIfOpen: Bool) throws(BackupProblem) {
        if SameFile.names(backup, target) { throw .sameFile(path: target) }
        self.backup = backup
        self.target = target
        self.evenIfOpen = evenIfOpen
    }

    public func run(
        logger: Logger, progress: ((_ copied: Int, _ total: Int) -> Void)? = nil, stopRequested: @escaping @Sendable () -> Bool = { false }
    ) async throws(BackupProblem) -> Outcome {
        try FilePlacement.checkTarget(target, replacing: true, evenIfOpen: evenIfOpen)
        let replaced = FileManager.default.fileExists(atPath: target)
        let partial = FilePlacement.partialName(for: target)
        do throws(BackupProblem) {
            let copy = try SnapshotCopy.copy(from: backup, to: partial, progress: progress, stopRequested: stopRequested)
            let report = try await StoreFileCheck.check(partial, reportingAs: backup, logger: logger, stopRequested: stopRequested)
            try SingleFile.fold(partial)
            if stopRequested() { throw BackupProblem.interrupted }
            try FilePlacement.place(partial, at: target, replacing: true, evenIfOpen: evenIfOpen)
            return Outcome(copy: copy, report: report, replaced: replaced)
        } catch {
            FilePlacement.discard(partial)
            throw error
        }
    }
}
