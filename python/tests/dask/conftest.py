"""The Dask tests' schedulers.  client: a LocalCluster of two worker
processes with 300 MB each, started once for the session by the tests
themselves (random ports, the dashboard's too), the default scheduler of
every compute from then on.  threads: Dask's threaded scheduler in this
process for the tests that compare many small cases (a distributed task
costs milliseconds; the blocks and their merging are the same)."""
import pytest

pytest.importorskip("dask", reason="mxp.dask needs dask (apt-get install python3-dask)")
distributed = pytest.importorskip("distributed", reason="the tests need python3-distributed")

WORKER_MEMORY = 300_000_000


@pytest.fixture(scope="session")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=WORKER_MEMORY,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def threads(client):
    import dask
    with dask.config.set(scheduler="threads"):
        yield
