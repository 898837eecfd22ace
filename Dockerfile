# tsbench's image: the static binary alone, run as a non-root user; no shell, no package
# manager. `make image` builds the binary (CGO_ENABLED=0) and this file with buildah, offline,
# into out/tsbench-image.tar (an OCI archive), the build context being out/image/.
FROM scratch
# For https storages: the CA bundle of the build machine (Debian's ca-certificates).
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY tsbench /tsbench
# 65532: the "nonroot" user of distroless images; the chart runs as it too.
USER 65532:65532
EXPOSE 8436
ENTRYPOINT ["/tsbench"]
CMD ["run", "-httpListenAddr", ":8436"]
