import GeoCore
import GeoTestSupport
import Testing
@testable import VicinityCore

@Suite("Ranking")
struct RankingTests {
    @Test("the selection finds the value a full sort puts at each rank, with repeats, sorted and reversed input")
    func selectionMatchesSorting() {
        var generator = SeededGenerator(seed: 31)
        for round in 0..<300 {
            let count = Int.random(in: 1...400, using: &generator)
            var values: [Double] = (0..<count).map { _ in
                // Few distinct values in some rounds, so that the pivot often equals its neighbours.
                round % 3 == 0 ? Double(Int.random(in: 0...5, using: &generator)) : Double.random(in: 0...1_000, using: &generator)
            }
            if round % 7 == 1 { values.sort() }
            if round % 7 == 2 { values.sort(by: >) }
            let sorted = values.sorted()
            for rank in Set([1, count, (count + 1) / 2, Int.random(in: 1...count, using: &generator)]) {
                var copy = values
                #expect(Ranking.smallest(rank, in: &copy) == sorted[rank - 1], "round \(round), rank \(rank) of \(count)")
                #expect(copy.sorted() == sorted, "the values are only reordered")
            }
        }
    }

    @Test("the best of things measured equals the first of a full sort by distance then id, ties across the cut included")
    func bestMatchesFullSort() {
        var generator = SeededGenerator(seed: 32)
        for round in 0..<300 {
            let count = Int.random(in: 0...300, using: &generator)
            // Distances from a small set in half the rounds, so that many things tie at the limit's distance.
            let measured: [(item: Int, distance: Distance)] = (0..<count).map { index in
                let meters = round % 2 == 0 ? Double(Int.random(in: 0...9, using: &generator)) * 10 : Double.random(in: 0...500, using: &generator)
                return (item: (index * 7_919) % 1_009, distance: Distance(meters: meters))
            }
            let expected = measured.sorted { a, b in a.distance != b.distance ? a.distance < b.distance : a.item < b.item }
            for limit in [1, 2, 20, count / 2, count, count + 5] where limit > 0 {
                let best = Ranking.best(measured, limit: limit, id: { $0 })
                #expect(best.map(\.item) == expected.prefix(limit).map(\.item), "round \(round), limit \(limit) of \(count)")
                #expect(best.map(\.distance) == expected.prefix(limit).map(\.distance))
            }
        }
    }
}
