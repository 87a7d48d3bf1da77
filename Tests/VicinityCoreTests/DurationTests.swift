import Testing
import VicinityCore

@Suite("Durations in whole units")
struct DurationTests {
    @Test("whole milliseconds and nanoseconds drop the fraction, towards zero on both sides of it")
    func wholeUnits() {
        let positive = Duration(secondsComponent: 2, attosecondsComponent: 3_456_789_999_999_999)
        #expect(positive.wholeMilliseconds == 2_003)
        #expect(positive.wholeNanoseconds == 2_003_456_789)
        let negative = Duration.zero - positive
        #expect(negative.wholeMilliseconds == -2_003)
        #expect(negative.wholeNanoseconds == -2_003_456_789)
        #expect(Duration.zero.wholeNanoseconds == 0)
    }
}
