from browserd.shim.entry import main

main()
