public enum PlutilCommand {}
