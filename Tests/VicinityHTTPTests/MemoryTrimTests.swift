#if canImport(Glibc)
import Foundation
import Glibc
import Synchronization
import Testing
import VicinityHTTP

@Suite("Free memory handed back to the system")
struct MemoryTrimTests {
    /// 32 MiB on each of four threads, in 64 KiB blocks: under glibc's 128 KiB mmap threshold, so they come from
    /// the arenas' heaps, as most of the server's allocations do.
    static let threads = 4
    static let blocksPerThread = 512
    static let blockSize = 64 * 1024

    @Test("memory freed on many threads stays resident until a trim, which returns it")
    func trimReturnsFreedPages() throws {
        /// Addresses, as raw pointers are not sendable between threads.
        let pinned = Mutex<[UInt]>([])
        let done = DispatchGroup()
        for _ in 0..<Self.threads {
            done.enter()
            let thread = Thread {
                var blocks: [UnsafeMutableRawPointer] = []
                for _ in 0..<Self.blocksPerThread {
                    guard let block = malloc(Self.blockSize) else { break }
                    memset(block, 1, Self.blockSize)
                    blocks.append(block)
                }
                // The last block stays: it sits at the top of its arena, so freeing the rest cannot shrink the
                // heap, and what they held stays with the allocator.
                if let last = blocks.popLast() { pinned.withLock { $0.append(UInt(bitPattern: last)) } }
                for block in blocks { free(block) }
                done.leave()
            }
            thread.start()
        }
        done.wait()
        defer { for address in pinned.withLock({ $0 }) { free(UnsafeMutableRawPointer(bitPattern: address)) } }

        let freed = (Self.blocksPerThread - 1) * Self.blockSize * Self.threads
        let before = try Self.anonymousResident()
        MemoryTrim.trim()
        let after = try Self.anonymousResident()
        // Half of what was freed, at least: other tests running meanwhile allocate too.
        #expect(before - after >= freed / 2, "resident \(before / 1_048_576) MiB before the trim, \(after / 1_048_576) MiB after")
    }

    /// The process's resident anonymous memory, in bytes (`RssAnon` of /proc/self/status).
    static func anonymousResident() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
            let kibibytes = line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap({ Int($0) })
        else { throw MemoryTrimTestError.noResidentSize(status) }
        return kibibytes * 1024
    }
}

enum MemoryTrimTestError: Error {
    case noResidentSize(String)
}
#endif
