"""The compatibility matrix: schema, loading, lookups."""

# the overlay directories named in the environment (os.pathsep-separated); here, not in
# load.py, so that naming what a run applies (settings.applied) does not import the loader
ENV_VAR = "ENVCHECK_MATRIX"
