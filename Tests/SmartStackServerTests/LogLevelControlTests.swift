import Logging
import Testing

@testable import SmartStackServer

@Suite struct LogLevelControlTests {
    @Test func everyLevelIsKeptAsSet() {
        let control = LogLevelControl(.warning)
        #expect(control.level == .warning)
        for level in Logger.Level.allCases {
            control.level = level
            #expect(control.level == level)
        }
    }
}
