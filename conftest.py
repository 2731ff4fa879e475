"""For every pytest run of the repository (unit tests and nbval over the notebooks): pin the
numerics first, and skip the notebooks' checked number cells where they are not promised."""
import ponder  # noqa: F401  (first: pins the numerics before anything imports torch)

pytest_plugins = ("ponder.regression",)
