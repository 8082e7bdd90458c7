from browserd.shim.cli import main

main()
