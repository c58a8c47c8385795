import SmartStackCore
import Testing

@Suite("Timestamp: RFC 3339 text")
struct TimestampTests {
    @Test func millisecondsAreWrittenAsMillisecondsAndMicrosecondsAsMicroseconds() {
        #expect(Timestamp(microseconds: 1_670_865_185_120_000).rfc3339 == "2022-12-12T17:13:05.120Z")
        #expect(Timestamp(microseconds: 1_670_865_185_120_007).rfc3339 == "2022-12-12T17:13:05.120007Z")
        #expect(
            Timestamp(microseconds: 1_670_865_185_000_300, utcOffsetSeconds: -8 * 3_600).rfc3339
                == "2022-12-12T09:13:05.000300-08:00")
        #expect(Timestamp(microseconds: -1).rfc3339 == "1969-12-31T23:59:59.999999Z")
    }

    /// What the service writes reads back as the same instant (a time it stamped, to the microsecond, used to read
    /// back up to a millisecond earlier).
    @Test func everyTimestampReadsBackAsItself() throws {
        var generator = SeededGenerator(seed: 14)
        for _ in 0..<2_000 {
            let micros = Int64(bitPattern: generator.next() % 4_102_444_800_000_000)
            let offset = Int32(Int64(generator.next() % 57) - 28) * 1_800
            let time = Timestamp(microseconds: micros, utcOffsetSeconds: offset)
            let back = try Timestamp(rfc3339: time.rfc3339)
            #expect(back == time && back.utcOffsetSeconds == offset)
        }
    }
}
