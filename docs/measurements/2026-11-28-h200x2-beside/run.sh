set -u
o=$1/beside; mkdir -p $o
export NCCL_NVLS_ENABLE=0 CUDA_PIPE_CACHE_DIR=/tmp/cpc
tar xJf build/beside/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 9
cp=/tmp/cuda-pipe/bin/cuda-pipe
for c in 8 16 32; do timeout -k 10 60 $cp run configs/ddp.yaml --devices all --chunks $c --json $o/run-$c.json > $o/run-$c.log 2>&1; echo "run $c exit $?" >> $o/exits.txt; done
timeout -k 10 120 $cp sweep configs/ddp.yaml --devices all --chunks 8,16,32 --max-time 20 --json $o/sweep.json > $o/sweep.log 2>&1; echo "sweep exit $?" >> $o/exits.txt
cat $o/exits.txt; grep -h "beside the\|beyond the compute\|bucket model" $o/*.log | head -12
tar czf $1/beside.tgz -C $1 beside && rm -rf $o
