import PropertyList

/// Where the loop's turns that committed writes spent their time, summed
/// since start (`status`'s `writeTurns`): what a write waits for, phase by
/// phase. `prefsbench storm` prints the averages of its storm; see
/// `docs/benchmarks.md`.
struct WriteTurnTimes {
    var turns = 0
    /// Receiving and decoding the turn's requests.
    var reading = 0.0
    /// Waiting for the last commit's writers (``PrefsServer/gatherWriters()``).
    var gathering = 0.0
    /// Committing, without ``flushing``: locks, checks, encoding, writing, renaming.
    var committing = 0.0
    /// Waiting for the disk inside the commits' replacements into spares
    /// (`fdatasync`, `fsync` of the directory); a commit that makes a new
    /// temporary file instead (no spare yet, no leases) counts its flushes
    /// in ``committing``.
    var flushing = 0.0
    /// Sending the acknowledgements.
    var replying = 0.0

    mutating func add(reading: Double, gathering: Double, flushing: Double, committing: Double, replying: Double) {
        turns += 1
        self.reading += reading
        self.gathering += gathering
        self.flushing += flushing
        self.committing += committing - flushing
        self.replying += replying
    }

    /// As `status` reports it: the count and each sum in seconds.
    var status: PlistValue {
        .dictionary([
            "turns": .integer(Int128(turns)),
            "readingSeconds": .real(reading),
            "gatheringSeconds": .real(gathering),
            "committingSeconds": .real(committing),
            "flushingSeconds": .real(flushing),
            "replyingSeconds": .real(replying),
        ])
    }
}
