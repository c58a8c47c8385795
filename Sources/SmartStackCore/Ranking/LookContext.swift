/// Where a look happens, at four levels of detail: the app in front; and the app before it; and the idle
/// gap; and the app before that. What follows a look is learned per level and backed off from the most
/// general to the most specific, so a rare context borrows from its general level.
struct LookContext: CountTableKey, Hashable {
    /// App indices, -1 for none or for a level that leaves them out.
    var last: Int32
    var previous: Int32
    var third: Int32
    var level: Int8
    /// The idle-gap bucket, -1 for a level that leaves it out.
    var gap: Int8

    /// The levels of the back-off chain.
    static let levels = 4

    init(last: Int32, previous: Int32, third: Int32, level: Int8, gap: Int8) {
        self.last = last
        self.previous = previous
        self.third = third
        self.level = level
        self.gap = gap
    }

    init() { self.init(last: -1, previous: -1, third: -1, level: -1, gap: -1) }

    var hashBits: UInt64 { LookOutcomeKey(context: self, key: -1).hashBits }
}

/// A look context and the widget key the user went to: the key of `UsageModel.lookOutcomes`.
struct LookOutcomeKey: CountTableKey, Hashable {
    var context: LookContext
    var key: Int32

    init(context: LookContext, key: Int32) {
        self.context = context
        self.key = key
    }

    init() { self.init(context: LookContext(), key: -1) }

    var hashBits: UInt64 {
        let apps = UInt64(UInt32(bitPattern: context.last)) | UInt64(UInt32(bitPattern: context.previous)) << 32
        let rest = UInt64(UInt32(bitPattern: context.third)) | UInt64(UInt32(bitPattern: key)) << 32
        let small = UInt64(UInt8(bitPattern: context.level)) | UInt64(UInt8(bitPattern: context.gap)) << 8
        return mix64(apps &+ rest &* 0x9E37_79B9_7F4A_7C15 &+ small &* 0xC2B2_AE3D_27D4_EB4F)
    }
}

extension UsageModel {
    /// The idle-gap bucket of a look at `now`.
    func lookGap(at now: Int64) -> Int8 {
        let gapSeconds = lastTime.map { Double(now - $0) / 1_000_000 }
        return switch gapSeconds {
        case .some(let g) where g < 10: 0
        case .some(let g) where g < 60: 1
        case .some(let g) where g < 300: 2
        case .some(let g) where g < 1_800: 3
        case .some(let g) where g < 14_400: 4
        default: 5
        }
    }

    /// The look context of back-off level `level` (0 = most general) with idle-gap bucket `gap`.
    @inline(__always)
    func lookContext(level: Int, gap: Int8) -> LookContext {
        let last = lastApp ?? -1
        return switch level {
        case 0: LookContext(last: last, previous: -1, third: -1, level: 0, gap: -1)
        case 1: LookContext(last: last, previous: previousApp ?? -1, third: -1, level: 1, gap: -1)
        case 2: LookContext(last: last, previous: previousApp ?? -1, third: -1, level: 2, gap: gap)
        default: LookContext(last: last, previous: previousApp ?? -1, third: thirdApp ?? -1, level: 3, gap: gap)
        }
    }

    /// The back-off chain of look contexts at `now`, most general first.
    func lookContexts(at now: Int64) -> [LookContext] {
        let gap = lookGap(at: now)
        return (0..<LookContext.levels).map { lookContext(level: $0, gap: gap) }
    }
}
